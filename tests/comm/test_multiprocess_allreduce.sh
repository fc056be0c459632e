#!/usr/bin/env bash
# One multi-process launch per (backend, world size) that runs every topology, element type and
# awkward length with --check inside: dtbench allreduce exits non-zero if any element is wrong.
# Usage: multiprocess_allreduce_test.sh path/to/dtbench gloo|mpi WORLD_SIZE
set -uo pipefail
dtbench=$1 backend=$2 world=$3
counts="0,1,13,$((world + 3)),1000003"
common=(allreduce --backend "$backend" --topology all --dtype float32,float16,bfloat16 --counts "$counts"
        --warmup-iters 1 --iters 2 --check --ranks-per-host 2 --timeout 30 --threads 1)
if [[ $backend == gloo ]]; then
  output=$(timeout --kill-after=10 200 "$dtbench" launch -n "$world" --grace 2 -- "$dtbench" "${common[@]}" 2>&1)
else
  output=$(timeout --kill-after=10 200 mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$world" \
             "$dtbench" "${common[@]}" 2>&1)
fi
rc=$?
echo "$output"
if [[ $rc -ne 0 ]]; then
  echo "FAIL: $backend world $world exited with $rc" >&2
  exit 1
fi
# Every topology ran: 7 (6 for float16/bfloat16 over mpi, and bfloat16 over gloo: native skipped).
topologies=$(grep '# topology .*, ' <<<"$output" | grep -vc skipped)
skipped=$(grep -c 'skipped' <<<"$output")
if [[ $((topologies + skipped)) -ne 21 ]]; then
  echo "FAIL: expected 21 topology x type sections (run or skipped), got $topologies run + $skipped skipped" >&2
  exit 1
fi
grep -q '# check: 0 wrong element' <<<"$output" || { echo "FAIL: no clean check line" >&2; exit 1; }
echo "ok: $backend world $world, $topologies sections checked"
