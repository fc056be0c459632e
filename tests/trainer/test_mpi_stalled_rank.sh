#!/usr/bin/env bash
# A stalled rank under MPI: MPI cannot cancel the collective the others wait in, so after --timeout
# rank 0 records the failure in its run directory (status "failed", the operation and deadline in
# "error", and that a collective cannot tell which rank is late), says so on stderr, and aborts the job;
# mpirun exits non-zero within the deadline.
# Usage: mpi_stalled_rank_test.sh path/to/dtbench
set -uo pipefail
dtbench=$1
command -v mpirun >/dev/null || { echo "SKIP: mpirun is not installed"; exit 0; }
tmp=$(mktemp -d)
launcher=
cleanup() { [[ -n $launcher ]] && kill -9 "$launcher" 2>/dev/null; pkill -9 -f "$tmp/run" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
timeout 60 mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2 "$dtbench" train --backend mpi \
  --model lenet --dataset synthetic --synthetic-train-size 100000 --batch-size 8 --epochs 1 --threads 1 --workers 0 \
  --quiet --no-eval --timeout 3 --out "$tmp/run" >"$tmp/log" 2>&1 &
launcher=$!
# Training has begun once rank 0 wrote config.json (after the rendezvous); give it a moment more.
for _ in $(seq 1 300); do [[ -f $tmp/run/config.json ]] && break; sleep 0.1; done
sleep 1
# The rank that is not rank 0: the run directory's owner must stay alive to record the failure.
stalled=
for pid in $(pgrep -f "$tmp/run"); do
  [[ $(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -c '^OMPI_COMM_WORLD_RANK=1$') -eq 1 ]] && stalled=$pid
done
[[ -n $stalled ]] || { echo "FAIL: rank 1 never started"; cat "$tmp/log"; exit 1; }
start=$(date +%s)
kill -STOP "$stalled"
wait "$launcher"
rc=$?
launcher=
elapsed=$(( $(date +%s) - start ))
failures=0
[[ $rc -ne 0 && $rc -lt 124 ]] || { echo "FAIL: mpirun ended with $rc"; failures=$((failures + 1)); }
[[ $elapsed -le 20 ]] || { echo "FAIL: the job took ${elapsed}s to end (deadline 3 s)"; failures=$((failures + 1)); }
grep -q '"status": "failed"' "$tmp/run/summary.json" || { echo "FAIL: status is not failed"; failures=$((failures + 1)); }
grep -q 'did not complete within 3.0 s' "$tmp/run/summary.json" ||
  { echo "FAIL: summary.json's error does not name the deadline"; failures=$((failures + 1)); }
grep -q 'MPI_Abort' "$tmp/log" || { echo "FAIL: stderr does not say the job is aborted"; failures=$((failures + 1)); }
# The native all-reduce cannot tell which rank is late, and says so (a point-to-point topology names it).
grep -q 'cannot tell which one is late' "$tmp/run/summary.json" ||
  { echo "FAIL: summary.json's error does not say the collective cannot name the late rank"; failures=$((failures + 1)); }
echo "--- output"; head -c 1500 "$tmp/log"
[[ $failures -eq 0 ]] && echo "ok: stalled rank ended the MPI job in ${elapsed}s with status failed" || exit 1
