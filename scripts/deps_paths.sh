# Where dtbench's environments live, for scripts/install_deps.sh, scripts/bootstrap.sh and
# scripts/compat_check.sh (sourced; cmake/Torch.cmake computes the same path). Sets:
#   PINNED_TORCH_VERSION, PINNED_TORCH_CUDA  scripts/torch.env's: what dtbench is measured on
#   TORCH_VERSION, TORCH_CUDA   the LibTorch to build against: scripts/torch.env, unless
#                               DTBENCH_TORCH_VERSION / DTBENCH_TORCH_CUDA name another (cu130, cu128,
#                               cu126, cpu, ...)
#   TORCH_INDEX                 the pip index it comes from: DTBENCH_TORCH_INDEX, else PyPI's default
#   DEPS_CACHE                  ${DTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dtbench}
#   TORCH_VENV                  $DEPS_CACHE/torch-<version>-<cuda>: torch (numpy, torchvision), shared by every
#                               clone on the machine
#   TOOLS_VENV                  $DEPS_CACHE/build-tools: cmake, ninja and nlohmann-json from PyPI, made
#                               only where the system has none (scripts/install_deps.sh --user)
_deps_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=torch.env
source "$_deps_here/torch.env"
PINNED_TORCH_VERSION=$TORCH_VERSION PINNED_TORCH_CUDA=$TORCH_CUDA
TORCH_VERSION=${DTBENCH_TORCH_VERSION:-$TORCH_VERSION}
TORCH_CUDA=${DTBENCH_TORCH_CUDA:-$TORCH_CUDA}
TORCH_INDEX=${DTBENCH_TORCH_INDEX:-}
DEPS_CACHE=${DTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dtbench}
TORCH_VENV=$DEPS_CACHE/torch-$TORCH_VERSION-$TORCH_CUDA
TOOLS_VENV=$DEPS_CACHE/build-tools
unset _deps_here
