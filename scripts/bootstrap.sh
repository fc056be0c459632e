#!/usr/bin/env bash
# One command for a fresh machine: installs what is missing (as root on Debian 12: Debian's packages;
# without root or apt: user-space tools from PyPI; either way PyTorch's torch==2.11.0 for CUDA 13 from
# PyPI into a shared environment outside the checkout: scripts/install_deps.sh), builds dtbench
# against that LibTorch (CUDA on; no GPU needed), then
#   scripts/bootstrap.sh          runs the main job (a short training run on synthetic
#                                 CIFAR-shaped data: no download) and prints what it measured;
#   scripts/bootstrap.sh test     does the same, then runs the whole test suite, label by label,
#                                 each within its time budget.
# Environment: BUILD_DIR (default build), JOBS (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
case "$mode" in demo|test) ;; *) echo "usage: $0 [demo|test]" >&2; exit 2 ;; esac

build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

t0=$(date +%s)
scripts/install_deps.sh
source scripts/deps_paths.sh
# The user way (no root or apt: scripts/install_deps.sh) brings CMake and ninja from PyPI: used where the
# system has no CMake of 3.25 or newer.
cmake_usable() {
  command -v cmake >/dev/null &&
    printf '%s\n3.25\n' "$(cmake --version | sed -nE 's/^cmake version ([0-9.]+).*/\1/p')" | sort -V -C -r
}
if ! cmake_usable && [[ -x $TOOLS_VENV/bin/cmake ]]; then
  export PATH=$TOOLS_VENV/bin:$PATH
fi
t1=$(date +%s)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[[ -f "$build/CMakeCache.txt" ]] || cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
# The main job needs the dtbench binary alone; `test` builds the test suite too.
if [[ $mode == test ]]; then
  cmake --build "$build" -j "$jobs"
else
  cmake --build "$build" -j "$jobs" --target dtbench
fi
t2=$(date +%s)
echo "bootstrap: install $((t1 - t0)) s, build $((t2 - t1)) s"

scripts/main_job.sh "$build/dtbench"
t3=$(date +%s)
echo "bootstrap: main job $((t3 - t2)) s"

[[ "$mode" == test ]] || exit 0
exec scripts/run_tests.sh "$build"
