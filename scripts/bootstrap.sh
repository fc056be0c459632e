#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing, builds dtbench, then
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
# Where a CUDA toolkit's headers are present but LibTorch has no CUDA (this CI machine), compile
# (not link) the GPU code paths too, so that they cannot rot unseen (cmake/CudaCompileCheck.cmake).
if [[ -f /usr/local/cuda/include/cuda_runtime_api.h ]]; then
  cmake -S . -B "$build" -DDTBENCH_CUDA_COMPILE_CHECK=ON >/dev/null
  cmake --build "$build" --target dtbench_trainer_cuda_check -j "$jobs"
  echo "bootstrap: CUDA code paths compiled against /usr/local/cuda/include ($(($(date +%s) - t3)) s)"
fi
exec scripts/run_tests.sh "$build"
