#!/usr/bin/env bash
# --threads 0 (the default) with several ranks on one machine: each rank runs its share of the cores the
# machine's ranks may run on (trainer/thread_share.h), so a default multi-rank run is not oversubscribed:
#  (a) 2 ranks: their intra-op threads in config.json's devices add up to at most the cores, and Table 1's
#      check column says nothing about it;
#  (b) more ranks than cores: one thread each (no fewer is possible), the row is `oversubscribed`, and the
#      note says to run fewer ranks, not fewer threads.
# Usage: test_default_threads.sh DTBENCH
set -euo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc)
common=(train --model lenet --dataset synthetic --synthetic-train-size 256 --no-eval --epochs 1 --max-steps 2
        --batch-size 8 --workers 0 --quiet)
"$dtbench" train "${common[@]:1}" --out "$tmp/runs/n1" > /dev/null
"$dtbench" launch -n 2 -- "$dtbench" "${common[@]}" --out "$tmp/runs/n2" > /dev/null
ranks=$((cores + 1))
"$dtbench" launch -n "$ranks" -- "$dtbench" "${common[@]}" --out "$tmp/crowded/n$ranks" > /dev/null
cp -r "$tmp/runs/n1" "$tmp/crowded/n1"
"$dtbench" report "$tmp/runs" --table time_speedup --format csv > "$tmp/t1.csv"
"$dtbench" report "$tmp/crowded" --table time_speedup > "$tmp/crowded.md"
"$dtbench" report "$tmp/crowded" --table time_speedup --format csv > "$tmp/crowded.csv"
/usr/bin/python3 - "$tmp" "$cores" "$ranks" <<'PY'
import csv, json, sys
tmp, cores, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
failures = []
devices = json.load(open(f"{tmp}/runs/n2/config.json"))["devices"]
threads = [d["threads"] for d in devices]
print(f"2 ranks on {cores} cores: threads {threads}", file=sys.stderr)
if sum(threads) > cores or min(threads) < 1:
    failures.append(f"(a) 2 ranks run threads {threads} on {cores} cores")
checks = [r["check"] for r in csv.DictReader(open(f"{tmp}/t1.csv"))]
if any("oversubscribed" in c for c in checks):
    failures.append(f"(a) Table 1 flags the default runs oversubscribed: {checks}")
crowded = json.load(open(f"{tmp}/crowded/n{ranks}/config.json"))["devices"]
if [d["threads"] for d in crowded] != [1] * ranks:
    failures.append(f"(b) {ranks} ranks on {cores} cores run threads {[d['threads'] for d in crowded]}, want 1 each")
row = [r for r in csv.DictReader(open(f"{tmp}/crowded.csv")) if r["N"] == str(ranks)]
if not row or "oversubscribed" not in row[0]["check"]:
    failures.append(f"(b) {ranks} ranks on {cores} cores are not flagged oversubscribed")
note = open(f"{tmp}/crowded.md").read()
if "run fewer ranks on the machine" not in note or "Give each rank fewer threads" in note:
    failures.append("(b) the oversubscription note does not tell one-thread ranks to run fewer ranks")
for f in failures: print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
PY
echo "ok: default threads share the machine's cores"
