#!/usr/bin/env bash
# --backend nccl on a machine without a GPU (a CUDA LibTorch, no device): every rank of a world-2
# launch fails at once, exit 1, naming the missing GPU, before it waits for any other rank, so the
# launch ends long before its --timeout. Skipped (77) where a GPU is visible, and where this build
# has no CUDA (nccl is then a usage error: tests/experiments/cli/test_cli.sh).
# Usage: test_nccl_without_gpu.sh DTBENCH
set -uo pipefail
dtbench=$1
version=$("$dtbench" --version) || { echo "FAIL: $dtbench --version failed" >&2; exit 1; }
if ! grep -q "^gpus visible: 0$" <<<"$version"; then echo "skipped: a GPU is visible"; exit 77; fi
if grep -q "(CUDA none" <<<"$version"; then echo "skipped: this build's LibTorch has no CUDA"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run NAME ARGS...: a world-2 launch of `dtbench ARGS` with a 120 s --timeout must exit 1 within 30 s,
# each rank saying that no GPU is visible.
run() {
  local name=$1
  shift
  local start=$SECONDS
  timeout --kill-after=5 60 "$dtbench" launch -n 2 -- "$dtbench" "$@" --timeout 120 >"$tmp/$name.out" 2>&1
  local rc=$? elapsed=$((SECONDS - start))
  [[ $rc == 1 ]] || fail "$name: the launch exited $rc, want 1: $(tail -c 600 "$tmp/$name.out")"
  ((elapsed < 30)) || fail "$name: the launch took ${elapsed} s: a rank waited for a peer"
  local named
  named=$(grep -c "needs a GPU, and no GPU is visible" "$tmp/$name.out")
  ((named >= 1)) || fail "$name: no rank named the missing GPU: $(tail -c 600 "$tmp/$name.out")"
  echo "ok: $name: exit $rc after ${elapsed} s; $(grep -m1 "no GPU is visible" "$tmp/$name.out")"
}

run train train --backend nccl --device cuda --model lenet --dataset synthetic --epochs 1 --max-steps 2 \
  --threads 1 --quiet --out "$tmp/run"
[[ ! -e $tmp/run/summary.json ]] || fail "train: a run that could not start left a summary.json"
run allreduce allreduce --backend nccl --topology native -b 1K -e 4K
# A usage error before any of that: nccl trains on GPUs, and runs --topology native only.
out=$("$dtbench" train --backend nccl --device cpu --dataset synthetic --out "$tmp/cpu" 2>&1)
rc=$?
[[ $rc == 2 && $out == *"--backend nccl communicates between GPUs"* ]] || fail "--device cpu: exit $rc: $out"
out=$("$dtbench" train --backend nccl --device cuda --topology ring --dataset synthetic --out "$tmp/ring" 2>&1)
rc=$?
[[ $rc == 2 && $out == *"cannot run --topology ring"* ]] || fail "--topology ring: exit $rc: $out"
out=$("$dtbench" allreduce --backend nccl --topology tree 2>&1)
rc=$?
[[ $rc == 2 && $out == *"cannot run --topology tree"* ]] || fail "allreduce --topology tree: exit $rc: $out"
((failures == 0)) && echo "nccl without a GPU: all checks passed"
exit $((failures > 0))
