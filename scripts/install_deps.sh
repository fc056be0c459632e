#!/usr/bin/env bash
# Installs what dtbench builds, tests and benchmarks with, idempotently (what is present is not
# fetched again; safe to run repeatedly, and by several clones at once). Two ways, by what this
# machine allows:
#
#   system  root (or sudo) on Debian 12 with apt: Debian's packages (the compilers, CMake, Gloo's
#           headers, Open MPI, cxxopts, Catch2, nlohmann-json, libcurl, libarchive, libpcap, and for
#           the whole test suite Slurm, MariaDB, nftables, pandas, matplotlib, debootstrap and
#           squashfs-tools: the install label and scripts/container_check.sh); then the torch
#           environment, made from Debian's Python.
#   user    anything else, or --user: a cluster's login node without root or apt (RHEL or Rocky with
#           modules, conda or pip). Nothing system-wide is touched:
#             - the torch environment is made from the first python3 on PATH (a module's, conda's;
#               DTBENCH_PYTHON names another);
#             - a build-tools environment beside it gets cmake, ninja and nlohmann-json from PyPI
#               (scripts/bootstrap.sh puts its bin/ first on PATH);
#             - cxxopts, Catch2 and Gloo's headers are fetched by CMake at configure time, each pinned
#               (cmake/FetchedDependencies.cmake; FETCHCONTENT_SOURCE_DIR_<NAME> for sites without
#               internet);
#             - Open MPI, libpcap, libcurl and libarchive are used where the system or a module has
#               them; without them CMake turns those features off and says which.
#   Either way, a CUDA LibTorch needs a CUDA toolkit of its major version when CMake configures (no GPU
#   needed): one on PATH or in /usr/local/cuda (a cluster's module) is used, else, for CUDA 13, NVIDIA's
#   nvcc (with NVVM and CRT), runtime and CCCL from PyPI are installed into DEPS_CACHE/cuda-toolkit-<cuda>
#   (an image). PyPI has no CUDA 12 nvcc: a torch for CUDA 12 needs the machine's (a cuda/12.x module);
#   DTBENCH_ALLOW_OTHER_CUDA_TOOLKIT=1 takes the machine's toolkit of another major instead (a CPU build:
#   scripts/compat_check.sh).
#
# The torch environment: PyTorch's torch==TORCH_VERSION wheel for TORCH_CUDA (scripts/torch.env, or
# DTBENCH_TORCH_VERSION / DTBENCH_TORCH_CUDA / DTBENCH_TORCH_INDEX: e.g. 2.8.0, cu128,
# https://download.pytorch.org/whl/cu128 for a cluster whose GPU driver runs CUDA 12), with its pinned
# nvidia-* packages, in a virtual environment outside the checkout that every clone on the machine
# shares (scripts/deps_paths.sh: TORCH_VENV, about 4.6 GB). CMake finds it there (cmake/Torch.cmake).
# The same torch runs the Python references (scripts/bench_*.py, scripts/reference/,
# tests/models/generate_expected.py), with the pinned torch's torchvision (TORCHVISION_VERSION: the
# reference of the FLOP counts, tests/models/generate_flops.py). A stamp written last marks it complete; an environment with its
# stamp is never deleted: if `import torch` fails there (a memory limit, an interrupted shell), the
# script says so and stops, and only an environment without a stamp (an interrupted install) is made
# again.
#
# Usage: scripts/install_deps.sh [--minimal] [--user]
#   --minimal  only what the build and the test suite's core need (system way: no figures, Slurm or
#              namespaces)
#   --user     the user way even where root and apt are at hand
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps_paths.sh

minimal=false user=false
for argument in "$@"; do
  case "$argument" in
    --minimal) minimal=true ;;
    --user) user=true ;;
    *) echo "usage: $0 [--minimal] [--user]" >&2; exit 2 ;;
  esac
done

# Pinned build tools of the user way (PyPI).
CMAKE_PIN=cmake==3.31.10
NINJA_PIN=ninja==1.13.0
NLOHMANN_PIN=nlohmann-json==3.12.0

can_install_system_packages() {
  command -v apt-get >/dev/null && command -v dpkg-query >/dev/null || return 1
  [[ $(id -u) -eq 0 ]] && return 0
  command -v sudo >/dev/null && sudo -n true 2>/dev/null
}
$user || can_install_system_packages || user=true

system_packages() {
  local core=(build-essential cmake ninja-build ccache pkg-config git python3-venv
              libgloo-dev libopenmpi-dev openmpi-bin
              libcxxopts-dev catch2 nlohmann-json3-dev zlib1g-dev
              libcurl4-openssl-dev libarchive-dev libpcap-dev dataset-fashion-mnist)
  local extra=(python3-pandas python3-matplotlib
               slurm-wlm munge nftables iproute2 tcpdump slurmdbd mariadb-server debootstrap squashfs-tools)
  local want=("${core[@]}") missing=() p
  $minimal || want+=("${extra[@]}")
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    echo "install_deps: all ${#want[@]} Debian packages present"
    return
  fi
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  echo "install_deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install_deps: Debian packages done"
}

# The python that makes the environments: Debian's on the system way, else DTBENCH_PYTHON or the first
# python3 on PATH (3.9 or newer, with venv and pip).
base_python() {
  local python
  if ! $user; then
    python=/usr/bin/python3
  else
    python=${DTBENCH_PYTHON:-$(command -v python3 || true)}
  fi
  if [[ -z $python ]] || ! "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    echo "install_deps: no usable Python: need python3 3.9 or newer with its venv module on PATH (load your" \
         "cluster's python module, activate conda, or set DTBENCH_PYTHON=/path/to/python3)" >&2
    exit 1
  fi
  echo "$python"
}

# The CUDA version TORCH_CUDA names: cu130 -> 13.0, cu128 -> 12.8; "" for cpu.
cuda_of_variant() {
  [[ $TORCH_CUDA =~ ^cu([0-9]+)([0-9])$ ]] && echo "${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
}

torch_environment() {
  local stamp=$TORCH_VENV/.dtbench-complete
  mkdir -p "$DEPS_CACHE"
  exec 9>"$DEPS_CACHE/.torch-$TORCH_VERSION-$TORCH_CUDA.lock"
  flock 9
  if [[ -f $stamp ]]; then
    local error
    if error=$("$TORCH_VENV/bin/python" -c 'import torch' 2>&1); then
      echo "install_deps: torch $(cat "$stamp") in $TORCH_VENV"
      return
    fi
    # Complete once, so never deleted here: the failure may pass (a memory limit, a signal).
    echo "install_deps: $TORCH_VENV is complete (its stamp says torch $(cat "$stamp")) but 'import torch' failed:" >&2
    echo "$error" | tail -n 3 >&2
    echo "install_deps: if the failure was passing (a memory limit on a login node, Ctrl-C), run again; if the" \
         "environment is damaged, remove it (rm -rf $(printf %q "$TORCH_VENV")) and run again" >&2
    exit 1
  fi
  rm -rf "$TORCH_VENV"  # no stamp: an install that was interrupted
  local python start index=()
  python=$(base_python)
  start=$(date +%s)
  [[ -n $TORCH_INDEX ]] && index=(--index-url "$TORCH_INDEX")
  echo "install_deps: installing torch==$TORCH_VERSION ($TORCH_CUDA) from ${TORCH_INDEX:-PyPI} into $TORCH_VENV" \
       "(about 3 GB to download)"
  "$python" -m venv "$TORCH_VENV"
  # numpy: torch's tensor <-> numpy conversions, and scripts/bench_loader.py; pinned beside the pinned
  # torch (scripts/torch.env), whatever pip pairs with another.
  local numpy=numpy
  [[ $TORCH_VERSION == "$PINNED_TORCH_VERSION" ]] && numpy=numpy==$NUMPY_VERSION
  "$TORCH_VENV/bin/pip" install --quiet --disable-pip-version-check "${index[@]}" "torch==$TORCH_VERSION" "$numpy"
  local got want_cuda
  got=$("$TORCH_VENV/bin/python" -c 'import torch
nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.version.cuda else None
print(torch.__version__, "CUDA", torch.version.cuda, "NCCL", nccl)')
  want_cuda=$(cuda_of_variant)
  if [[ $got != "$TORCH_VERSION"* ]] || { [[ -n $want_cuda ]] && [[ $got != *"CUDA $want_cuda"* ]]; } ||
     { [[ -z $want_cuda ]] && [[ $got != *"CUDA None"* ]]; }; then
    echo "install_deps: expected torch $TORCH_VERSION for $TORCH_CUDA, ${TORCH_INDEX:-PyPI} gave: $got; choose the" \
         "index of that variant with DTBENCH_TORCH_INDEX (https://download.pytorch.org/whl/$TORCH_CUDA)" >&2
    exit 1
  fi
  echo "$got" >"$stamp"
  echo "install_deps: torch $got in $TORCH_VENV ($(( $(date +%s) - start )) s)"
}

# torchvision beside the pinned torch (scripts/torch.env's TORCHVISION_VERSION, the release built for that
# torch), installed into a complete environment when missing: the FLOP counts' reference runs its
# ResNet-50 and VGG-16. Another torch gets none (its row of the compatibility table runs no Python).
reference_packages() {
  [[ $TORCH_VERSION == "$PINNED_TORCH_VERSION" && $TORCH_CUDA == "$PINNED_TORCH_CUDA" ]] || return 0
  "$TORCH_VENV/bin/python" -c 'import torchvision' 2>/dev/null && return 0
  local index=()
  [[ -n $TORCH_INDEX ]] && index=(--index-url "$TORCH_INDEX")
  echo "install_deps: torchvision==$TORCHVISION_VERSION into $TORCH_VENV"
  "$TORCH_VENV/bin/pip" install --quiet --disable-pip-version-check "${index[@]}" "torchvision==$TORCHVISION_VERSION" \
    "torch==$TORCH_VERSION"
}

# cmake, ninja and nlohmann-json from PyPI, where the system has no CMake of 3.25 or newer or no
# nlohmann-json.
build_tools() {
  local stamp=$TOOLS_VENV/.dtbench-complete
  [[ -f $stamp ]] && { echo "install_deps: build tools ($(cat "$stamp")) in $TOOLS_VENV"; return; }
  rm -rf "$TOOLS_VENV"
  local python
  python=$(base_python)
  echo "install_deps: installing $CMAKE_PIN $NINJA_PIN $NLOHMANN_PIN from PyPI into $TOOLS_VENV"
  "$python" -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/pip" install --quiet --disable-pip-version-check "$CMAKE_PIN" "$NINJA_PIN" "$NLOHMANN_PIN"
  echo "$CMAKE_PIN $NINJA_PIN $NLOHMANN_PIN" >"$stamp"
}

# The major version of the CUDA toolkit CMake would find (nvcc on PATH, else /usr/local/cuda).
system_cuda_major() {
  local nvcc
  nvcc=$(command -v nvcc || true)
  [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
  [[ -n $nvcc ]] && "$nvcc" --version 2>/dev/null | sed -nE 's/.*release ([0-9]+)\..*/\1/p' | head -n 1
}

# A CUDA toolkit of the torch's CUDA version for CMake when the machine has none of its major: NVIDIA's
# PyPI packages, merged into one root (bin, include, lib) that cmake/Torch.cmake gives FindCUDAToolkit.
cuda_toolkit() {
  local cuda major
  cuda=$(cuda_of_variant)
  [[ -n $cuda ]] || return 0
  major=${cuda%%.*}
  if [[ $(system_cuda_major) == "$major" ]]; then
    echo "install_deps: CUDA $major toolkit found (nvcc on PATH or /usr/local/cuda)"
    return
  fi
  local dir=$DEPS_CACHE/cuda-toolkit-$TORCH_CUDA
  [[ -f $dir/.dtbench-complete ]] && { echo "install_deps: CUDA toolkit $(cat "$dir/.dtbench-complete") in $dir/root"; return; }
  if ((major < 13)); then
    # PyPI's nvidia-cuda-nvcc-cu12 ships ptxas alone, no nvcc: a CUDA 12 toolkit must be the machine's.
    if [[ ${DTBENCH_ALLOW_OTHER_CUDA_TOOLKIT:-} == 1 && -n $(system_cuda_major) ]]; then
      echo "install_deps: warning: CUDA $(system_cuda_major)'s toolkit for a torch of CUDA $cuda" \
           "(DTBENCH_ALLOW_OTHER_CUDA_TOOLKIT=1): dtbench then loads CUDA $(system_cuda_major)'s runtime, which builds" \
           "and runs on the CPU, but not on a GPU whose driver runs CUDA $major alone"
      return
    fi
    echo "install_deps: no CUDA $major toolkit on this machine, which a torch for CUDA $cuda needs to configure: load" \
         "your cluster's cuda/$major.x module (nvcc on PATH) and run again. PyPI has none for CUDA $major (its" \
         "nvidia-cuda-nvcc-cu$major ships ptxas alone)" >&2
    exit 1
  fi
  rm -rf "$dir"
  # CUDA 13's nvcc with its NVVM and CRT, runtime and CCCL (one shared nvidia/cu13/ folder).
  local packages=("nvidia-cuda-nvcc==$cuda.*" "nvidia-nvvm==$cuda.*" "nvidia-cuda-crt==$cuda.*"
                  "nvidia-cuda-runtime==$cuda.*" "nvidia-cuda-cccl==$cuda.*")
  echo "install_deps: no CUDA $major toolkit on this machine: installing ${packages[*]} from PyPI into $dir"
  local python
  python=$(base_python)
  # An environment of its own (a system Python may have no pip; its site-packages merges the packages'
  # shared nvidia/ folder, which pip's --target would not).
  "$python" -m venv "$dir/pip"
  "$dir/pip/bin/pip" install --quiet --disable-pip-version-check --no-deps "${packages[@]}"
  # One root of symbolic links. The torch environment's own nvidia-* packages come after: LibTorch's
  # CUDA headers include those libraries' headers (cusparse.h, cublas_v2.h, ...), which a toolkit has
  # and these wheels do not.
  mkdir -p "$dir/root"
  local part
  for part in "$dir"/pip/lib/python3*/site-packages/nvidia/*/ "$TORCH_VENV"/lib/python3*/site-packages/nvidia/*/; do
    [[ -d $part ]] && cp -rsn "$part." "$dir/root/"
  done
  [[ -e $dir/root/lib64 ]] || ln -s lib "$dir/root/lib64"
  local cudart
  cudart=$(find "$dir/root/lib/" -name 'libcudart.so.*' | sort | head -n 1)
  [[ -n $cudart && ! -e $dir/root/lib/libcudart.so ]] && ln -s "$(basename "$cudart")" "$dir/root/lib/libcudart.so"
  if [[ ! -x $dir/root/bin/nvcc ]]; then
    echo "install_deps: the CUDA $cuda packages gave no bin/nvcc in $dir/root" >&2
    exit 1
  fi
  "$dir/root/bin/nvcc" --version | sed -nE 's/.*release ([0-9.]+),.*/\1/p' | head -n 1 >"$dir/.dtbench-complete"
  echo "install_deps: CUDA toolkit $(cat "$dir/.dtbench-complete") in $dir/root"
}

if $user; then
  echo "install_deps: the user way (no root or apt needed): environments in $DEPS_CACHE"
else
  system_packages
fi
torch_environment
reference_packages
$user && build_tools
cuda_toolkit
