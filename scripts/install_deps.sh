#!/usr/bin/env bash
# Installs what dtbench builds, tests and benchmarks with, idempotently (what is present is not
# fetched again; safe to run repeatedly, and by several clones at once):
#   - Debian 12 packages (apt);
#   - LibTorch: PyTorch's torch==TORCH_VERSION wheel for CUDA 13 with its pinned nvidia-* packages
#     (scripts/torch.env), from PyPI into a virtual environment made from Debian's Python, outside
#     the checkout so that every clone on this machine shares it (about 4.6 GB):
#       ${DTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dtbench}/torch-<version>-<cuda>
#     CMake finds it there (cmake/Torch.cmake). The same torch runs the Python references
#     (scripts/bench_*.py, scripts/reference/, tests/models/generate_expected.py).
# Usage: scripts/install_deps.sh [--minimal]
#   --minimal  only what the build and the test suite need (no figures, Slurm or namespaces)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/torch.env

core=(build-essential cmake ninja-build pkg-config git python3-venv
      libgloo-dev libopenmpi-dev openmpi-bin
      libcxxopts-dev catch2 nlohmann-json3-dev zlib1g-dev
      libcurl4-openssl-dev libarchive-dev libpcap-dev dataset-fashion-mnist)
extra=(python3-pandas python3-matplotlib
       slurm-wlm munge nftables iproute2 tcpdump slurmdbd mariadb-server)

want=("${core[@]}")
[[ "${1:-}" == "--minimal" ]] || want+=("${extra[@]}")

sudo=""
need_root() {
  [[ $(id -u) -eq 0 ]] && return 0
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: $*" >&2; exit 1; }
  sudo=sudo
}

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#want[@]} Debian packages present"
else
  need_root "${missing[@]}"
  echo "install_deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install_deps: Debian packages done"
fi

# The torch environment. A stamp written last marks it complete: an interrupted install is redone,
# and a lock keeps two clones from installing it at the same time.
cache=${DTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dtbench}
venv=$cache/torch-$TORCH_VERSION-$TORCH_CUDA
stamp=$venv/.dtbench-complete
mkdir -p "$cache"
exec 9>"$cache/.torch-$TORCH_VERSION-$TORCH_CUDA.lock"
flock 9
if [[ -f $stamp ]] && "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  echo "install_deps: torch $(cat "$stamp") in $venv"
  exit 0
fi
rm -rf "$venv"
start=$(date +%s)
echo "install_deps: installing torch==$TORCH_VERSION ($TORCH_CUDA) from PyPI into $venv (about 3 GB to download)"
/usr/bin/python3 -m venv "$venv"
# numpy: torch's tensor <-> numpy conversions, and scripts/bench_loader.py.
"$venv/bin/pip" install --quiet --disable-pip-version-check "torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION"
got=$("$venv/bin/python" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "NCCL",
                                           ".".join(map(str, torch.cuda.nccl.version())))')
case "$got" in
  "$TORCH_VERSION+$TORCH_CUDA CUDA 13."*) ;;
  *) echo "install_deps: expected torch $TORCH_VERSION+$TORCH_CUDA with CUDA 13, PyPI gave: $got" >&2; exit 1 ;;
esac
echo "$got" >"$stamp"
echo "install_deps: torch $got in $venv ($(( $(date +%s) - start )) s)"
