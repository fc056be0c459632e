#!/usr/bin/env bash
# The GPU check: the `gpu` test label and a short training on `cuda`, on a GPU machine that reaches
# no package registry (docs/gpu.md). Three steps, two machines:
#
#   On a Debian machine with apt (this project's CPU machines), either
#     scripts/gpu_check.sh stage DIR      build dtbench and the gpu test executables with the options a
#                                         GPU node lacks turned off (MPI, download, figures, capture),
#                                         and copy them with their tests' scripts into DIR (a few MB);
#                                         --build-dir BUILD: in BUILD, configured already without MPI,
#                                         download and capture (a machine without those libraries);
#     scripts/gpu_deps.sh PREFIX          or: the header-only packages for a build on the GPU machine.
#   On the GPU machine, with DIR or PREFIX copied along with the sources:
#     scripts/gpu_check.sh run OUTDIR --staged DIR     run the staged executables on this machine's
#                                         torch (its libraries on LD_LIBRARY_PATH), or
#     scripts/gpu_check.sh run OUTDIR --build PREFIX   build here against this machine's torch first.
#
# `run` uses the torch of DTBENCH_TORCH_PYTHON, else of `python3`. It runs `ctest -L gpu`, then
# dtbench train on cuda (ResNet-18, synthetic data, 2 epochs of 20 steps) and dtbench report, and
# leaves in OUTDIR: nvidia-smi.txt, version.txt, ctest.log, the run directories under runs/, and
# report.md. It fails when a gpu test fails, and when any of them skips while nvidia-smi lists a GPU.
#
#     scripts/gpu_check.sh bench OUTDIR --staged DIR [BENCH OPTIONS...]
#                                         the GPU speed benchmark (scripts/bench_gpu.py: dtbench against
#                                         PyTorch eager and CUDA graphs, docs/gpu.md "GPU speed") with the
#                                         staged dtbench on this machine's torch; results in OUTDIR.
set -uo pipefail
caller=$PWD  # DIR, OUTDIR, BUILD and PREFIX are the caller's: resolved against this after the cd
cd "$(dirname "$0")/.."
here=$PWD
usage() {
  echo "usage: $0 stage DIR [--build-dir BUILD] | run OUTDIR (--staged DIR | --build PREFIX) | bench OUTDIR --staged DIR [OPTIONS]" >&2
  exit 2
}

# The folder of the torch libraries of $python (DTBENCH_TORCH_PYTHON, else python3): a staged dtbench loads them.
torch_lib_dir() {
  "${DTBENCH_TORCH_PYTHON:-python3}" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))'
}

bench() {
  local out=$1 where=$2
  shift 2
  mkdir -p "$out" || return 1
  local torch_lib
  torch_lib=$(torch_lib_dir) || { echo "gpu_check: ${DTBENCH_TORCH_PYTHON:-python3} cannot import torch" >&2; return 1; }
  export LD_LIBRARY_PATH=$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1
  "${DTBENCH_TORCH_PYTHON:-python3}" scripts/bench_gpu.py --dtbench "$(realpath "$where")/bin/dtbench" \
    --python "$(command -v "${DTBENCH_TORCH_PYTHON:-python3}")" --out "$(realpath "$out")" "$@"
}

# The gpu label's tests, as CTest runs them: Catch2 suites (one CTest test per case, as
# catch_discover_tests makes them) and shell tests (77 = skipped).
catch_suites=(tests_gpu_training tests_nccl)
shell_tests=("gpu_runs_through_the_cli:tests/trainer/test_gpu_runs.sh")

stage() {
  local dir=$1 build=${2:-build-gpu-stage}
  # A build of its own with what a GPU node lacks turned off; or, with --build-dir, a build configured
  # already without them (a machine that has none of those libraries, as the install label's).
  if [[ -z ${2:-} ]]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTBENCH_WITH_MPI=OFF -DDTBENCH_WITH_DOWNLOAD=OFF \
      -DDTBENCH_WITH_FIGURES=OFF -DDTBENCH_WITH_CAPTURE=OFF >/dev/null || return 1
  elif [[ $(grep -cE '^#define DTBENCH_HAVE_(MPI|DOWNLOAD|CAPTURE) 0$' "$build/generated/dtbench/build_config.h" \
             2>/dev/null) != 3 ]]; then
    echo "gpu_check: $build is not a configured build without MPI, download and capture (a GPU node has none of" \
         "their libraries); stage without --build-dir to make one" >&2
    return 1
  fi
  cmake --build "$build" --target dtbench "${catch_suites[@]}" || return 1
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/tests/trainer" || return 1
  local exe
  for exe in dtbench "${catch_suites[@]}"; do
    exe=$(find "$build" -name "$exe" -type f -perm -u+x | head -n 1)
    strip -o "$dir/bin/$(basename "$exe")" "$exe" || return 1
  done
  cp tests/trainer/test_gpu_runs.sh tests/trainer/run_helpers.sh "$dir/tests/trainer/" || return 1
  # The tests as CTest runs them, one per Catch2 case; @STAGE@ becomes the folder's path where it
  # runs (CTest's test files know no commands that could find it). Catch2 reads ',' and '[' in a
  # name as syntax: they are escaped, as catch_discover_tests does.
  {
    echo "# Written by scripts/gpu_check.sh stage: the gpu label of $(git describe --always --dirty 2>/dev/null)."
    local suite name spec
    for suite in "${catch_suites[@]}"; do
      while IFS= read -r name; do
        [[ -n $name ]] || continue
        spec=$(sed -e 's/[],[\\]/\\&/g' <<<"$name")
        echo "add_test([=[$suite: $name]=] \"@STAGE@/bin/$suite\" [=[$spec]=] --warn NoTests)"
        echo "set_tests_properties([=[$suite: $name]=] PROPERTIES LABELS gpu TIMEOUT 300" \
             "SKIP_REGULAR_EXPRESSION DTBENCH_TEST_SKIPPED)"
      done < <("$dir/bin/$suite" --list-test-names-only)
    done
    local entry
    for entry in "${shell_tests[@]}"; do
      echo "add_test(${entry%%:*} \"@STAGE@/${entry#*:}\" \"@STAGE@/bin/dtbench\")"
      echo "set_tests_properties(${entry%%:*} PROPERTIES LABELS gpu TIMEOUT 400 SKIP_RETURN_CODE 77)"
    done
  } >"$dir/gpu_tests.cmake.in"
  echo "gpu_check: staged $(grep -c '^add_test' "$dir/gpu_tests.cmake.in") gpu tests in $dir ($(du -sh "$dir" | cut -f1))"
}

run() {
  local out=$1 mode=$2 where=$3
  mkdir -p "$out/runs" || return 1
  out=$(realpath "$out")
  local python=${DTBENCH_TORCH_PYTHON:-python3}
  local torch_lib torch_cmake
  torch_lib=$(torch_lib_dir) || { echo "gpu_check: $python cannot import torch" >&2; return 1; }
  torch_cmake=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  local gpus=0
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1; then
    gpus=$(grep -c '^GPU ' "$out/nvidia-smi.txt")
  fi
  echo "gpu_check: nvidia-smi lists $gpus GPU(s); torch from $torch_lib"

  local dtbench ctest_dir
  if [[ $mode == --staged ]]; then
    where=$(realpath "$where")
    export LD_LIBRARY_PATH=$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    dtbench=$where/bin/dtbench
    ctest_dir=$out/ctest
    mkdir -p "$ctest_dir" && sed "s|@STAGE@|$where|g" "$where/gpu_tests.cmake.in" >"$ctest_dir/CTestTestfile.cmake" ||
      return 1
  else
    local build=build-gpu
    local started=$SECONDS
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTBENCH_TORCH_PYTHON="$(command -v "$python")" \
      -DCMAKE_PREFIX_PATH="$torch_cmake;$(realpath "$where")/usr" -DDTBENCH_WITH_MPI=OFF -DDTBENCH_WITH_DOWNLOAD=OFF \
      -DDTBENCH_WITH_FIGURES=OFF -DDTBENCH_WITH_CAPTURE=OFF >"$out/configure.log" 2>&1 ||
      { tail -n 30 "$out/configure.log" >&2; return 1; }
    cmake --build "$build" --target dtbench "${catch_suites[@]}" >"$out/build.log" 2>&1 ||
      { tail -n 30 "$out/build.log" >&2; return 1; }
    echo "gpu_check: built in $((SECONDS - started)) s"
    dtbench=$here/$build/dtbench
    ctest_dir=$here/$build
  fi
  "$dtbench" --version | tee "$out/version.txt" || return 1

  local status=0
  (cd "$ctest_dir" && ctest -L '^gpu$' --output-on-failure --no-tests=error) >"$out/ctest.log" 2>&1 || status=1
  tail -n 25 "$out/ctest.log"
  local skipped
  skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$out/ctest.log")
  if ((gpus > 0 && skipped > 0)); then
    echo "gpu_check: $skipped gpu test(s) skipped although nvidia-smi lists $gpus GPU(s)" >&2
    status=1
  fi

  local run=$out/runs/resnet18-cuda
  if "$dtbench" train --device cuda --model resnet18 --dataset synthetic --epochs 2 --max-steps 20 --quiet \
       --out "$run" >"$out/train.log" 2>&1; then
    "$dtbench" report "$out/runs" --table time_speedup,compute_comm,bandwidth >"$out/report.md" 2>&1 || status=1
    cat "$out/train.log" "$out/report.md"
  else
    echo "gpu_check: training on cuda failed: $(tail -n 5 "$out/train.log")" >&2
    status=1
  fi
  echo "gpu_check: $( ((status == 0)) && echo passed || echo FAILED ); logs and runs in $out"
  return $status
}

# A path argument as the caller meant it (relative to the folder this script was started from).
from_caller() { (cd "$caller" && realpath -m -- "$1"); }

case "${1:-}" in
  stage) [[ $# == 2 || ($# == 4 && $3 == --build-dir) ]] || usage
         stage "$(from_caller "$2")" "${4:+$(from_caller "$4")}" ;;
  run) [[ $# == 4 && ($3 == --staged || $3 == --build) ]] || usage; run "$(from_caller "$2")" "$3" "$(from_caller "$4")" ;;
  bench) [[ $# -ge 4 && $3 == --staged ]] || usage; bench "$(from_caller "$2")" "$(from_caller "$4")" "${@:5}" ;;
  *) usage ;;
esac
