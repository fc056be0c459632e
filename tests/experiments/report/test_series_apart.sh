#!/usr/bin/env bash
# The report keeps apart what differs and shares what does not (docs/report.md, "Which runs"), in its tables
# and figures alike, from copies of the golden fixture's lenet runs:
#  (a) single-rank runs with --compress none, fp16 and powersgd compress nothing: they are repeats of one
#      baseline (runs 3) that the fp16 series and the uncompressed one share; the series are told apart by
#      their setup (compress=fp16), never merged;
#  (b) an evaluated 2-rank run and a --no-eval one are not repeats of each other;
#  (c) an extrapolated 2-rank row prints one T in Table 1 and Table 2 (one rounding rule);
#  (e) --mode dp runs on 1 and 2 GPUs (one process each, config.json's dp_devices) are a series of N = 1 and 2,
#      not repeats, and Tables 2 and 3 (about dtbench's collectives, which they have none of) leave them out;
#  (d) figures.json: no two speedup series share a label, no series holds two points at one N, no two bars
#      (compute vs communication, throughput) share a label.
# Usage: test_series_apart.sh DTBENCH FIXTURE_DIR
set -euo pipefail
dtbench=$1 fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# copy SOURCE NAME KEY=JSON... : a fixture run under a new name with config.json keys set; summary=N makes
# the last epoch's full_epoch_steps N (an extrapolated epoch).
copy() {
  local source=$1 name=$2
  shift 2
  cp -r "$fixture/runs/$source" "$tmp/runs/$name"
  /usr/bin/python3 - "$tmp/runs/$name" "$@" <<'PY'
import json, sys
run, changes = sys.argv[1], sys.argv[2:]
config = json.load(open(f"{run}/config.json"))
summary = json.load(open(f"{run}/summary.json"))
for change in changes:
    key, value = change.split("=", 1)
    if key == "summary":
        for epoch in summary["epochs"]:
            epoch["full_epoch_steps"] = int(value)
            epoch["extrapolated"] = True
    else:
        config[key] = json.loads(value)
json.dump(config, open(f"{run}/config.json", "w"))
json.dump(summary, open(f"{run}/summary.json", "w"))
PY
}
mkdir -p "$tmp/runs"
copy lenet-b32-n1 n1-none
copy lenet-b32-n1 n1-fp16 'compress="fp16"'
copy lenet-b32-n1 n1-powersgd 'compress="powersgd"'
copy lenet-b32-n2 n2-none
copy lenet-b32-n2 n2-fp16 'compress="fp16"' \
  'bucket_collectives=[[{"what": "gradients", "elements": 62007, "dtype": "float16"}]]'
copy lenet-b64-n2 n2-b64-eval summary=40
copy lenet-b64-n2 n2-b64-noeval 'evaluate=false' summary=40
copy lenet-b64-n1 n1-b64 summary=40
copy lenet-b32-n1 dp1 'mode="dp"' 'device="cuda"' 'dp_devices=1'
copy lenet-b32-n1 dp2 'mode="dp"' 'device="cuda"' 'dp_devices=2'

"$dtbench" report "$tmp/runs" --table time_speedup --format csv > "$tmp/t1.csv"
"$dtbench" report "$tmp/runs" --table time_speedup > "$tmp/t1.md"
"$dtbench" report "$tmp/runs" --table compute_comm > "$tmp/t2.md"
/usr/bin/python3 - "$tmp/t1.csv" "$tmp/t1.md" "$tmp/t2.md" <<'PY' || status=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
failures = []
b32 = [r for r in rows if r["batch"] == "32" and "cuda, dp" not in r["model"]]
setups = sorted({r["setup"] for r in b32})
if setups != ["gloo/ring ssgd, compress=fp16", "gloo/ring ssgd, compress=none"]:
    failures.append(f"(a) the batch-32 series' setups are {setups}")
for r in b32:
    if r["N"] == "1" and r["runs"] != "3":
        failures.append(f"(a) the single-rank baseline of '{r['setup']}' has runs {r['runs']}, want 3 (one shared)")
    if r["N"] == "2" and not r["speedup"]:
        failures.append(f"(a) '{r['setup']}' N=2 found no baseline")
b64 = [r for r in rows if r["batch"] == "64" and r["N"] == "2"]
if len(b64) != 2 or any(r["runs"] != "1" for r in b64):
    failures.append(f"(b) evaluated and --no-eval runs: {[(r['model'], r['runs']) for r in b64]}, want two rows of one run")

def markdown_rows(path):
    lines = [l for l in open(path) if l.startswith("| ")]
    header = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    return [dict(zip(header, [c.strip() for c in l.strip().strip("|").split("|")])) for l in lines[1:]]
t1 = {(r["model"], r["batch"], r["N"]): r["T_s"] for r in markdown_rows(sys.argv[2])}
t2 = {(r["model"], r["batch"], r["N"]): r["T_s"] for r in markdown_rows(sys.argv[3])}
for key, value in t2.items():
    if key[1] == "64" and t1.get(key) != value:
        failures.append(f"(c) {key}: Table 1 prints T {t1.get(key)}, Table 2 {value}")
dp = sorted((r["N"], r["runs"], bool(r["speedup"])) for r in rows if "cuda, dp" in r["model"])
if dp != [("1", "1", True), ("2", "1", True)]:
    failures.append(f"(e) the --mode dp rows (N, runs, has speedup): {dp}, want N 1 and 2, one run each, with speedups")
if any("cuda, dp" in key[0] for key in t2):
    failures.append(f"(e) Table 2 holds a --mode dp row: {[k for k in t2 if 'cuda, dp' in k[0]]}")
for f in failures: print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
PY

if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  "$dtbench" report "$tmp/runs" --plots "$tmp/fig" > /dev/null 2> "$tmp/plots.err" ||
    fail "(d) report --plots failed: $(cat "$tmp/plots.err")"
  /usr/bin/python3 - "$tmp/fig/figures.json" <<'PY' || status=1
import json, sys
data = json.load(open(sys.argv[1]))
failures = []
labels = [(s["model"], s["setup"], s["batch"]) for s in data["speedup"]]
if len(labels) != len(set(labels)):
    failures.append(f"speedup series share labels: {labels}")
for s in data["speedup"]:
    ns = [p["N"] for p in s["points"]]
    if len(ns) != len(set(ns)):
        failures.append(f"series {s['model']} {s['setup']} B={s['batch']} has points at N {ns}")
for key in ("compute_comm", "throughput"):
    bars = [b["label"] for b in data[key]]
    if len(bars) != len(set(bars)):
        failures.append(f"{key} bars share labels: {bars}")
for f in failures: print("FAIL: (d)", f, file=sys.stderr)
sys.exit(1 if failures else 0)
PY
else
  fail "python3-matplotlib is missing: run scripts/install_deps.sh"
fi
[[ $status -eq 0 ]] && echo "ok: series, repeats and baselines kept apart and shared as the key says"
exit $status
