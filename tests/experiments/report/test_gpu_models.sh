#!/usr/bin/env bash
# Runs on two GPU models are two series, each with its own baseline, and Table 1 says why: the
# fixture's lenet runs at batch 32 on 1 and 2 ranks, once as if on A100s and once as if on V100s
# (config.json's device cuda and its devices, one per rank), the V100 runs twice as slow. Mixed
# into one series, the V100's 2-rank run would take the A100's baseline (or the repeats' median).
# One part under two driver spellings is one model: a third 2-rank run on "NVIDIA A100-SXM-80GB" (the
# spelling some drivers give the A100 SXM4 80GB) is a repeat of the A100-SXM4-80GB one, named by the part.
# Usage: test_gpu_models.sh DTBENCH FIXTURE_DIR
set -euo pipefail
dtbench=$1 fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

make_runs() {  # make_runs GPU_NAME NAME_PREFIX TIME_FACTOR
  mkdir -p "$tmp/runs"
  for n in 1 2; do
    local dir=$tmp/runs/$2-n$n
    cp -r "$fixture/runs/lenet-b32-n$n" "$dir"
    /usr/bin/python3 - "$dir" "$1" "$3" <<'PY'
import json, sys
d, gpu = sys.argv[1], sys.argv[2]
config = json.load(open(f"{d}/config.json"))
config["device"] = "cuda"
config["devices"] = [{"type": "cuda", "model": gpu, "host": "node1", "boot_id": "b", "index": r}
                     for r in range(config.get("world_size", 1))]
json.dump(config, open(f"{d}/config.json", "w"))
PY
    /usr/bin/python3 "$(dirname "$0")/scale_batch_times.py" "$dir" "$3"
  done
}
make_runs "NVIDIA A100-SXM4-80GB" a100 1
make_runs "Tesla V100-SXM2-32GB" v100 2
make_runs "NVIDIA A100-SXM-80GB" a100-spelled 1
rm -rf "$tmp/runs/a100-spelled-n1"

"$dtbench" report "$tmp/runs" --table time_speedup --format csv > "$tmp/t1.csv"
"$dtbench" report "$tmp/runs" --table time_speedup > "$tmp/t1.md"
/usr/bin/python3 - "$tmp/t1.csv" <<'PY' || status=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
models = sorted({r["model"] for r in rows})
want = ["lenet (cuda NVIDIA A100 SXM4 80GB)", "lenet (cuda Tesla V100-SXM2-32GB)"]
if models != want:
    sys.exit(f"FAIL: Table 1's series {models}, want {want}")
for r in rows:
    repeats = "2" if r["model"].startswith("lenet (cuda NVIDIA A100") and r["N"] == "2" else "1"
    if r["runs"] != repeats:
        sys.exit(f"FAIL: {r['model']} N={r['N']} has runs {r['runs']}, want {repeats}: the GPU models were grouped wrong")
    if r["N"] == "2" and r["speedup"] == "":
        sys.exit(f"FAIL: {r['model']} N=2 found no baseline of its own GPU model")
speedups = {r["model"]: r["speedup"] for r in rows if r["N"] == "2"}
if len(set(speedups.values())) != 1:  # both models scale alike: the V100's times are the A100's × 2
    sys.exit(f"FAIL: the speedups {speedups} differ: a series took the other model's baseline")
PY
grep -qF -- "- The runs ran on 2 GPU models (NVIDIA A100 SXM4 80GB; Tesla V100-SXM2-32GB): each model is a series of its own" \
  "$tmp/t1.md" || fail "Table 1 does not say why the GPU models are separate series: $(cat "$tmp/t1.md")"
exit $status
