#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing (Debian's packages, and
# PyTorch's torch==2.11.0 for CUDA 13 from PyPI into a shared environment outside the checkout:
# scripts/install_deps.sh), builds dtbench against that LibTorch (CUDA on; no GPU needed), then
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
t1=$(date +%s)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[[ -f "$build/CMakeCache.txt" ]] || cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
t2=$(date +%s)
echo "bootstrap: install $((t1 - t0)) s, build $((t2 - t1)) s"

scripts/main_job.sh "$build/dtbench"
t3=$(date +%s)
echo "bootstrap: main job $((t3 - t2)) s"

[[ "$mode" == test ]] || exit 0
exec scripts/run_tests.sh "$build"
