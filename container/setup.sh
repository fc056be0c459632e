#!/usr/bin/env bash
# What an image of dtbench runs to install and build it (container/dtbench.def's %post, the
# Containerfile's RUN): the project's own install as root on Debian 12 (scripts/install_deps.sh
# --minimal: Debian's packages the build and the ranks need, and the torch environment), then the
# dtbench binary alone, installed at /opt/dtbench/bin/dtbench with the torch environment at
# /opt/dtbench/torch-<version>-<cuda>; then what an image does not need is removed (the build's
# objects, apt's and pip's caches). The sources stay at /opt/dtbench/src (the slurm/ job scripts, the
# docs).
#
# The torch, by the nodes' GPU driver (nvidia-smi's "CUDA Version"): the definition's and the
# Containerfile's build arguments TORCH_VERSION and TORCH_CUDA, given here as VERSION CUDA:
#   2.11.0 cu130  the default (scripts/torch.env's, from PyPI): a driver of CUDA 13 (580 or newer);
#   2.8.0 cu128   a driver of CUDA 12 ("CUDA Version: 12.x"), the torch scripts/install_deps.sh names for it:
#                 torch from https://download.pytorch.org/whl/cu128, and the CUDA 12.8 toolkit its
#                 configure needs (PyPI has no CUDA 12 nvcc) from NVIDIA's repository for Debian 12
#                 (cuda-nvcc-12-8, cuda-libraries-dev-12-8 and cuda-nvtx-12-8, kept in the image).
# Any other release and variant is taken the same way: torch from pytorch.org's index of the variant,
# for CUDA 12 the toolkit of its version from NVIDIA's repository.
# Usage (as root, in the image being built): /opt/dtbench/src/container/setup.sh [--print] [VERSION CUDA]
#   --print  print the steps (the packages, the install's torch and index) and run none of them
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)  # /opt/dtbench/src in the image
usage() { echo "usage: $0 [--print] [VERSION CUDA]  (e.g. 2.11.0 cu130, the default, or 2.8.0 cu128 for CUDA 12)" >&2; exit 2; }
print=false args=()
for argument in "$@"; do
  case "$argument" in
    --print) print=true ;;
    -*) usage ;;
    *) args+=("$argument") ;;
  esac
done
# shellcheck source=../scripts/torch.env
source "$src/scripts/torch.env"
case ${#args[@]} in
  0) version=$TORCH_VERSION cuda=$TORCH_CUDA ;;
  2) version=${args[0]} cuda=${args[1]} ;;
  *) usage ;;
esac
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  { echo "container setup: TORCH_VERSION '$version' is not a torch release such as 2.11.0 or 2.8.0" >&2; exit 2; }
[[ $cuda =~ ^cu(1[23])([0-9])$ ]] ||
  { echo "container setup: TORCH_CUDA '$cuda' is not a CUDA 12 or 13 variant such as cu130 or cu128" >&2; exit 2; }
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
index=""
[[ $version == "$TORCH_VERSION" && $cuda == "$TORCH_CUDA" ]] || index=https://download.pytorch.org/whl/$cuda

# Each step printed (--print) or run.
step() {
  if $print; then echo "$*"; else "$@"; fi
}

start=$(date +%s)
cd "$src"
export DTBENCH_CACHE_DIR=/opt/dtbench DTBENCH_TORCH_VERSION=$version DTBENCH_TORCH_CUDA=$cuda DTBENCH_TORCH_INDEX=$index
if ((major == 12)); then
  # NVIDIA's CUDA repository for Debian 12 (its keyring package adds the source), then the toolkit's
  # compiler, its libraries' headers and NVTX, at /usr/local/cuda-12.<minor>: nvcc on PATH is the
  # toolkit install_deps.sh and CMake take.
  repository=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64
  step apt-get update -qq
  step apt-get install -y -qq --no-install-recommends ca-certificates curl
  step curl -fsSL -o /tmp/cuda-keyring.deb "$repository/cuda-keyring_1.1-1_all.deb"
  step dpkg -i /tmp/cuda-keyring.deb
  step rm -f /tmp/cuda-keyring.deb
  step apt-get update -qq
  step apt-get install -y -qq --no-install-recommends "cuda-nvcc-$major-$minor" "cuda-libraries-dev-$major-$minor" \
    "cuda-nvtx-$major-$minor"
  $print && echo "export PATH=/usr/local/cuda-$major.$minor/bin:\$PATH"
  export PATH=/usr/local/cuda-$major.$minor/bin:$PATH
fi
if $print; then
  echo "DTBENCH_CACHE_DIR=$DTBENCH_CACHE_DIR DTBENCH_TORCH_VERSION=$version DTBENCH_TORCH_CUDA=$cuda" \
       "DTBENCH_TORCH_INDEX=$index scripts/install_deps.sh --minimal"
  echo "install_deps: torch==$version ($cuda) from ${index:-PyPI} into /opt/dtbench/torch-$version-$cuda"
  exit 0
fi
scripts/install_deps.sh --minimal
source scripts/deps_paths.sh
cmake -S . -B /opt/dtbench/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTBENCH_BUILD_TESTS=OFF
cmake --build /opt/dtbench/build --target dtbench
install -D -m 0755 /opt/dtbench/build/dtbench /opt/dtbench/bin/dtbench
rm -rf /opt/dtbench/build /root/.cache/pip /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
echo "container setup: dtbench $(/opt/dtbench/bin/dtbench --version 2>/dev/null | head -n 1) with torch in" \
     "$TORCH_VENV, $(( $(date +%s) - start )) s"
