#!/usr/bin/env bash
# One row of the LibTorch compatibility table (docs/gpu.md, "Which LibTorch"): dtbench built and tested
# against another PyTorch release than the pinned one, as a cluster user would install it.
#   1. torch==VERSION for CUDA (PyPI's wheel, or INDEX: pytorch.org's per-CUDA indexes) into an
#      environment of its own, the user way of scripts/install_deps.sh. The configure needs a CUDA
#      toolkit (no GPU): one of CUDA 13 comes from the machine or PyPI; PyPI has no CUDA 12 nvcc, so a
#      torch for CUDA 12 is configured with this machine's CUDA 13 toolkit
#      (DTBENCH_ALLOW_OTHER_CUDA_TOOLKIT=1), which a CPU build allows and the row names;
#   2. a build folder of its own, configured and built (timed);
#   3. the unit, train and mpi labels (scripts/run_tests.sh's budgets);
#   4. one Markdown row on stdout and appended to OUT (default build-compat/matrix.md):
#        | version | CUDA | built | labels | build time |
#      where a step fails, the row says where and with the first error, never "skipped";
#   5. the environment, the CUDA toolkit and the build folder are deleted (about 8 GB a version)
#      unless --keep, when this run made them: what was there before it is kept (an environment a
#      user made, such as the CUDA 12 one of docs/cluster-quickstart.md; the pinned release's, every
#      clone's, is never deleted).
# Not part of CI (each row downloads about 3 GB and builds the whole tree: about 25 minutes here).
# Usage: scripts/compat_check.sh VERSION CUDA [INDEX] [--keep] [--out FILE]
#   e.g.  scripts/compat_check.sh 2.4.1 cu121       (PyPI's 2.4.1 is for CUDA 12.1)
#         scripts/compat_check.sh 2.8.0 cu128
#         scripts/compat_check.sh 2.15.0 cu132
#         scripts/compat_check.sh 2.8.0 cu126 https://download.pytorch.org/whl/cu126
set -uo pipefail
usage="usage: $0 VERSION CUDA [INDEX] [--keep] [--out FILE]"
keep=false out=build-compat/matrix.md positional=()
while (($#)); do
  case "$1" in
    --keep) keep=true ;;
    # FILE is the caller's: resolved before the cd below.
    --out) (($# >= 2)) || { echo "compat_check: --out needs a FILE for the row; $usage" >&2; exit 2; }
           out=$(realpath -m -- "$2"); shift ;;
    *) positional+=("$1") ;;
  esac
  shift
done
((${#positional[@]} >= 2)) || { echo "$usage" >&2; exit 2; }
cd "$(dirname "$0")/.."
export DTBENCH_TORCH_VERSION=${positional[0]} DTBENCH_TORCH_CUDA=${positional[1]} DTBENCH_TORCH_INDEX=${positional[2]:-}
source scripts/deps_paths.sh
build=build-compat/$TORCH_VERSION-$TORCH_CUDA
logs=build-compat/logs/$TORCH_VERSION-$TORCH_CUDA
mkdir -p "$logs" "$(dirname "$out")"
first_error() { grep -m1 -E 'error|Error|FAIL' "$1" | cut -c1-200; }
row() {
  local line="| $TORCH_VERSION | $TORCH_CUDA | $1 | $2 | $3 |"
  echo "$line"
  echo "$line" >>"$out"
}
# Deleted at the end (unless --keep): what this run makes, never what was there before it.
made=()
for path in "$build" "$TORCH_VENV" "$DEPS_CACHE/cuda-toolkit-$TORCH_CUDA"; do
  [[ -e $path ]] || made+=("$path")
done
cleanup() {
  $keep && return
  local path
  for path in "${made[@]}"; do
    # The pinned environment is every clone's: never deleted here.
    [[ $path != "$build" && $TORCH_VERSION == "$PINNED_TORCH_VERSION" && $TORCH_CUDA == "$PINNED_TORCH_CUDA" ]] &&
      continue
    rm -rf "$path"
  done
}
trap cleanup EXIT

# A torch for CUDA 12 configures with this machine's CUDA 13 toolkit (PyPI has no CUDA 12 nvcc): the row
# says which toolkit built it.
export DTBENCH_ALLOW_OTHER_CUDA_TOOLKIT=1
if ! scripts/install_deps.sh --user >"$logs/install.log" 2>&1; then
  row "install failed: $(first_error "$logs/install.log")" "-" "-"
  exit 1
fi
cuda=$(tail -n 1 "$TORCH_VENV/.dtbench-complete" 2>/dev/null)
[[ -x $TOOLS_VENV/bin/cmake ]] && ! command -v cmake >/dev/null && export PATH=$TOOLS_VENV/bin:$PATH
start=$(date +%s)
if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$logs/configure.log" 2>&1; then
  row "configure failed: $(grep -m1 -A2 'CMake Error' "$logs/configure.log" | tr '\n' ' ' | cut -c1-300)" "-" "-"
  exit 1
fi
if ! cmake --build "$build" -j "${JOBS:-$(nproc)}" >"$logs/build.log" 2>&1; then
  row "build failed after $(( $(date +%s) - start )) s: $(first_error "$logs/build.log")" "-" "-"
  exit 1
fi
built_s=$(( $(date +%s) - start ))
# The CUDA toolkit that configured it (CMake's CUDA compiler).
toolkit=$(sed -nE 's/.*The CUDA compiler identification is NVIDIA ([0-9.]+).*/nvcc \1/p' "$logs/configure.log" | head -n 1)
labels=() status=0
for label in unit train mpi; do
  timeout 900 ctest --test-dir "$build" -L "^$label\$" -j 2 --output-on-failure >"$logs/$label.log" 2>&1
  summary=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$logs/$label.log" | tail -n 1)
  labels+=("$label: ${summary:-no summary (see $logs/$label.log)}")
  grep -q ' 0 tests failed' <<<"$summary" || status=1
done
row "yes ($cuda; configured with ${toolkit:-no CUDA compiler})" "$(IFS=';'; echo "${labels[*]}")" "${built_s} s"
exit $status
