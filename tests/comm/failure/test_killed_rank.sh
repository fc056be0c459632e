#!/usr/bin/env bash
# A killed rank ends a gloo run on the other ranks, within the deadline, with a message naming it.
# Usage: killed_rank_test.sh path/to/dtbench TOPOLOGY
set -uo pipefail
dtbench=$1 topology=$2
tmp=$(mktemp -d)
pids=()
cleanup() { pkill -9 -P $$ 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
port=$(( 20000 + RANDOM % 20000 ))
for r in 0 1 2; do
  RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$dtbench" allreduce --backend gloo --topology "$topology" --counts 100000 --warmup-iters 0 \
    --iters 100000000 --timeout 5 >"$tmp/out.$r" 2>"$tmp/err.$r" &
  pids+=($!)
done
for _ in $(seq 1 300); do grep -q '# topology' "$tmp/out.0" 2>/dev/null && break; sleep 0.1; done
grep -q '# topology' "$tmp/out.0" || { echo "FAIL: the ranks never started"; cat "$tmp"/err.*; exit 1; }
sleep 0.5
kill -9 "${pids[1]}"
wait "${pids[1]}" 2>/dev/null
start=$(date +%s)
failures=0
for r in 0 2; do
  timeout 20 tail --pid="${pids[$r]}" -f /dev/null
  wait "${pids[$r]}"
  rc=$?
  if [[ $rc -eq 0 || $rc -ge 124 ]]; then echo "FAIL: rank $r ended with $rc"; failures=$((failures + 1)); fi
  if ! grep -q 'rank 1' "$tmp/err.$r"; then
    echo "FAIL: rank $r's message does not name rank 1:"; cat "$tmp/err.$r"; failures=$((failures + 1))
  fi
  echo "rank $r: $(head -c 600 "$tmp/err.$r")"
done
elapsed=$(( $(date +%s) - start ))
[[ $elapsed -le 12 ]] || { echo "FAIL: the ranks took ${elapsed}s to stop (deadline 5 s)"; failures=$((failures + 1)); }
[[ $failures -eq 0 ]] && echo "ok: killed rank named by both survivors in ${elapsed}s" || exit 1
