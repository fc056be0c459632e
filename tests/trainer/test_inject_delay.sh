#!/usr/bin/env bash
# Network impairment inside dtbench (--inject-*, comm/impairment/impairment.h), end to end on 2 ranks:
# an injected delay shows up in the measured communication time of every step (a ring over 2
# ranks holds 2 sends per all-reduce, a pair exchange 1), it is recorded in config.json, and
# --topology native (the backend moves the bytes) is refused with exit 2.
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
echo "inject test: passed"
