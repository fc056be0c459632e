#!/usr/bin/env bash
# One multi-process launch per (backend, world size) that runs every topology, element type and
# awkward length with --check inside: dtbench allreduce exits non-zero if any element is wrong. Over
# gloo, with --message-log: every rank's payload sends equal the counted traffic (check_message_log.py).
# Usage: multiprocess_allreduce_test.sh path/to/dtbench gloo|mpi WORLD_SIZE
set -uo pipefail
dtbench=$1 backend=$2 world=$3
counts="0,1,13,$((world + 3)),1000003"
common=(allreduce --backend "$backend" --topology all --dtype float32,float16,bfloat16 --counts "$counts"
        --warmup-iters 1 --iters 2 --check --ranks-per-host 2 --timeout 30 --threads 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ $backend == gloo ]]; then
  # Also the message log (docs/wire.md): every payload send is a `gradients` row of the bytes counted.
  common+=(--message-log "$tmp/messages" --traffic "$tmp/traffic.csv")
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
# Every topology ran: 7 per element type (a section a backend cannot run says skipped).
topologies=$(grep '# topology .*, ' <<<"$output" | grep -vc skipped)
skipped=$(grep -c 'skipped' <<<"$output")
if [[ $((topologies + skipped)) -ne 21 ]]; then
  echo "FAIL: expected 21 topology x type sections (run or skipped), got $topologies run + $skipped skipped" >&2
  exit 1
fi
grep -q '# check: 0 wrong element' <<<"$output" || { echo "FAIL: no clean check line" >&2; exit 1; }
if [[ $backend == gloo ]]; then
  if ! result=$(/usr/bin/python3 "$(dirname "$0")/../trainer/check_message_log.py" "$tmp/messages" "$world" \
                  --traffic "$tmp/traffic.csv" --category gradients --category control); then
    echo "FAIL: --message-log: $result" >&2
    exit 1
  fi
  echo "ok: --message-log: $result"
fi
echo "ok: $backend world $world, $topologies sections checked"
