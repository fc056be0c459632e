#!/usr/bin/env bash
# Real 4-rank training runs (lenet, synthetic data, 3 steps) over every topology: dtbench report's
# byte model (Table 3's model_bytes, the traffic section's expected_bytes) must equal the bytes the
# ranks counted (point-to-point topologies) or recorded (native), exactly, for every rank; with
# --compress fp16 too (half the bytes, compression_ratio and achieved_ratio 2), and with powersgd Table
# 3 takes the factors' sizes from bucket_collectives for the steps that were compressed and the whole
# buckets for its first two (--compress-start 2 of 3 steps): `compress` says "powersgd (1 of 3 steps)",
# the model equals the counted bytes, and every ratio is the epoch's. Every run's batches.csv counts the
# all-reduces its config.json plans (grad_collectives).
# Usage: report_byte_model_test.sh DTBENCH
set -euo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--model lenet --dataset synthetic --synthetic-train-size 512 --synthetic-test-size 100 --no-eval
        --epochs 1 --max-steps 3 --batch-size 8 --threads 1 --quiet)
run() {  # run NAME TOPOLOGY [extra flags]
  local name=$1 topology=$2; shift 2
  "$dtbench" launch -n 4 -- "$dtbench" train "${common[@]}" --topology "$topology" "$@" --out "$tmp/runs/$name"
}
run ring ring
run tree tree
run star star
run btstar binary-tree-star --ranks-per-host 2
run clique clique
run hier hierarchical --ranks-per-host 2
run native native
run ring-fp16 ring --compress fp16
run native-powersgd native --compress powersgd

# batches.csv's grad_collectives, counted as the all-reduces were issued, against config.json's plan:
# one a bucket on an uncompressed step (every step of ring and fp16, PowerSGD's first two), and on a
# PowerSGD step as many as bucket_collectives lists for the bucket.
/usr/bin/python3 - "$tmp/runs" <<'PY'
import csv, json, sys
failures = []
for name in ("ring", "ring-fp16", "native-powersgd"):
    config = json.load(open(f"{sys.argv[1]}/{name}/config.json"))
    buckets = config["bucket_collectives"]
    start = config["compress_start"] if name.endswith("powersgd") else 3
    for row in csv.DictReader(open(f"{sys.argv[1]}/{name}/batches.csv")):
        want = len(buckets) if int(row["step"]) <= start else sum(len(b) for b in buckets)
        if int(row["grad_collectives"]) != want:
            failures.append(f"{name} rank {row['rank']} step {row['step']}: grad_collectives {row['grad_collectives']}, planned {want}")
if sum(len(b) for b in json.load(open(f"{sys.argv[1]}/native-powersgd/config.json"))["bucket_collectives"]) <= 1:
    failures.append("native-powersgd plans a single collective: nothing tells the counts apart")
for f in failures: print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
PY

"$dtbench" report "$tmp/runs" --table bandwidth --format csv > "$tmp/bandwidth.csv"
"$dtbench" report "$tmp/runs" --table traffic --format csv > "$tmp/traffic.csv"
/usr/bin/python3 - "$tmp/bandwidth.csv" "$tmp/traffic.csv" <<'PY'
import csv, sys
bandwidth = list(csv.DictReader(open(sys.argv[1])))
traffic = list(csv.DictReader(open(sys.argv[2])))
failures = []
if len(bandwidth) != 9: failures.append(f"Table 3 has {len(bandwidth)} rows, expected 9")
compressed = {row["compress"].split(" ")[0]: row for row in bandwidth if row["compress"] != "none"}
bandwidth = [row for row in bandwidth if row["compress"] in ("none", "fp16")]
fp16 = compressed.get("fp16", {})
# Half of 248,028: the same bucket in float16.
if (fp16.get("grad_bytes") != "124014" or float(fp16.get("compression_ratio", 0)) != 2
        or float(fp16.get("achieved_ratio", 0)) != 2):
    failures.append(f"fp16 row: {fp16}")
psgd = compressed.get("powersgd", {})
# lenet at rank 2: 237 uncompressed elements with the flag, P 472 and Q 1,658 (float32): 9,468 bytes a
# compressed step; the first two steps send the whole 248,028: the epoch's mean S = (2 × 248,028 + 9,468) / 3.
mean = (2 * 248028 + 9468) / 3
if psgd.get("compress") != "powersgd (1 of 3 steps)":
    failures.append(f"powersgd row: compress {psgd.get('compress')!r}, expected 'powersgd (1 of 3 steps)'")
if psgd.get("grad_bytes") != str(round(mean)) or abs(float(psgd.get("compression_ratio", 0)) - 248028 / mean) > 1e-4:
    failures.append(f"powersgd row: grad_bytes {psgd.get('grad_bytes')}, compression_ratio {psgd.get('compression_ratio')}")
elif psgd["model_bytes"] != psgd["counted_bytes"] or abs(float(psgd["achieved_ratio"]) - 248028 / mean) > 1e-4:
    failures.append(f"powersgd row: model {psgd['model_bytes']}, counted {psgd['counted_bytes']}, "
                    f"achieved {psgd['achieved_ratio']}")
for row in bandwidth:
    if row["model_bytes"] != row["counted_bytes"] or int(row["model_bytes"]) <= 0:
        failures.append(f"{row['setup']}: model {row['model_bytes']} != counted {row['counted_bytes']}")
    # S = every parameter's gradient plus the stop flag, 4 bytes each: 4 x (62,006 + 1).
    if row["grad_bytes"] != "248028" and row["compress"] == "none":
        failures.append(f"{row['setup']}: grad_bytes {row['grad_bytes']}, expected 248028")
if len(traffic) != 9: failures.append(f"traffic has {len(traffic)} rows, expected 9")
for row in traffic:
    if row["expected_bytes"] != row["counted_bytes"]:
        failures.append(f"{row['id']}: expected {row['expected_bytes']} != counted {row['counted_bytes']}")
for f in failures: print("FAIL:", f, file=sys.stderr)
if failures: sys.exit(1)
print(f"byte model equals counted bytes on {len(bandwidth)} runs (every topology)")
PY
