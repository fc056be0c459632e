#!/usr/bin/env bash
# Network impairment inside dtbench (--inject-*, comm/impairment/impairment.h), end to end on 2 ranks:
# an injected delay shows up in the measured communication time of every step (a ring over 2
# ranks holds 2 sends per all-reduce, a pair exchange 1), it is recorded in config.json, and
# --topology native (the backend moves the bytes) is refused with exit 2; a hold not shorter than
# --timeout is refused at once, naming both; SIGTERM ends a hold and the run stops as interrupted.
# Usage: inject_delay_test.sh DTBENCH
set -euo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 64 --no-eval
        --epochs 1 --max-steps 4 --batch-size 16 --threads 1 --quiet)

"$dtbench" launch -n 2 -- "$dtbench" train "${common[@]}" --topology ring --inject-delay-ms 40 --out "$tmp/ring"
"$dtbench" launch -n 2 -- "$dtbench" train "${common[@]}" --sync pairavg --inject-delay-ms 40 --out "$tmp/pairs"

/usr/bin/python3 - "$tmp" <<'PY'
import csv, json, sys
root = sys.argv[1]
failures = []
for run, held in (("ring", 0.080), ("pairs", 0.040)):
    config = json.load(open(f"{root}/{run}/config.json"))
    if config["inject_delay_ms"] != 40 or config["inject_loss_pct"] != 0:
        failures.append(f"{run}: config.json records inject_delay_ms {config['inject_delay_ms']}")
    rows = list(csv.DictReader(open(f"{root}/{run}/batches.csv")))
    if len(rows) != 8:
        failures.append(f"{run}: {len(rows)} rows in batches.csv, expected 8")
    for row in rows:
        if float(row["comm_total_s"]) < held:
            failures.append(f"{run}: rank {row['rank']} step {row['step']} communicated {row['comm_total_s']} s, "
                            f"less than the {held} s the injected delay holds")
for f in failures: print("FAIL:", f, file=sys.stderr)
if failures: sys.exit(1)
print("injected delay appears in every step's communication time (ring and pair exchange)")
PY

rc=0
err=$("$dtbench" train "${common[@]}" --topology native --inject-delay-ms 5 --out "$tmp/native" 2>&1) || rc=$?
if [[ $rc -ne 2 ]] || ! grep -q "with --topology native the backend moves the bytes itself" <<<"$err"; then
  echo "FAIL: --inject-delay-ms with --topology native: exit $rc, $err" >&2
  exit 1
fi
rc=0
err=$("$dtbench" train "${common[@]}" --topology ring --inject-loss-pct 120 --out "$tmp/bad" 2>&1) || rc=$?
if [[ $rc -ne 2 ]] || ! grep -q "inject-loss-pct is a percentage" <<<"$err"; then
  echo "FAIL: --inject-loss-pct 120: exit $rc, $err" >&2
  exit 1
fi
# A hold the receiver cannot outwait (40 s against --timeout 5) is refused at the first send, naming both.
rc=0
err=$(timeout 120 "$dtbench" launch -n 2 -- "$dtbench" train "${common[@]}" --topology ring --inject-delay-ms 40000 \
      --timeout 5 --out "$tmp/beyond" 2>&1) || rc=$?
if [[ $rc -eq 0 || $rc -eq 124 ]] || ! grep -q "would be held 40.000 s by the injected impairment" <<<"$err" ||
   ! grep -q "not less than --timeout 5.000 s" <<<"$err"; then
  echo "FAIL: --inject-delay-ms 40000 --timeout 5: exit $rc, $(tail -c 600 <<<"$err")" >&2
  exit 1
fi
# SIGTERM during a hold (20 s a send, 4 steps of 2 sends): the hold ends, the step completes and the run
# stops as interrupted (exit 75) with its checkpoint, instead of holding on past the launcher's grace.
"$dtbench" launch -n 2 -- "$dtbench" train "${common[@]}" --topology ring --inject-delay-ms 20000 --timeout 120 \
  --out "$tmp/stopped" 2>"$tmp/stopped.err" &
launcher=$!
for _ in $(seq 100); do [[ -f $tmp/stopped/config.json ]] && break; sleep 0.2; done
sleep 1
kill -TERM "$launcher"
rc=0
wait "$launcher" || rc=$?
status=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$tmp/stopped/summary.json" 2>/dev/null || true)
if [[ $rc -ne 75 || $status != interrupted || ! -f $tmp/stopped/checkpoint/state.json ]]; then
  echo "FAIL: SIGTERM during an injected hold: exit $rc (want 75), status '$status': $(tail -c 600 "$tmp/stopped.err")" >&2
  exit 1
fi
echo "inject test: passed"
