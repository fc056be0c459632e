#!/usr/bin/env bash
# The GPU path through the command line (label gpu; skipped, 77, where no GPU is visible):
#  (a) gloo with CUDA tensors: 2 ranks on one GPU train to the parameters of the same 2-rank run on
#      the CPU (buckets are all-reduced on the CPU either way);
#  (b) SIGTERM to a GPU run, then --resume: the finished run equals an uninterrupted GPU run;
#  (c) --backend nccl: `dtbench allreduce --check` at world 1 finds every element right, and a
#      world-1 nccl training run completes;
#  (d) `dtbench report` over these GPU runs prints Tables 1-3 with them (device cuda).
# Usage: test_gpu_runs.sh DTBENCH
set -uo pipefail
dtbench=$1
version=$("$dtbench" --version) || { echo "FAIL: $dtbench --version failed" >&2; exit 1; }
if grep -q "^gpus visible: 0$" <<<"$version"; then echo "skipped: no GPU is visible"; exit 77; fi
tmp=$(mktemp -d)
pids=()
trap 'pkill -9 -P $$ 2>/dev/null; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
py() { python3 "$@"; }
source "$(dirname "$0")/run_helpers.sh"

common=(train --model lenet --dataset synthetic --synthetic-train-size 512 --synthetic-test-size 64 --batch-size 16
        --lr 0.02 --seed 7 --quiet --timeout 120)
# close A B RELATIVE: exits 0 when the numbers A and B agree within RELATIVE.
close() { py -c 'import sys; a, b, r = map(float, sys.argv[1:]); sys.exit(abs(a - b) > r * max(abs(a), abs(b), 1e-12))' "$@"; }

echo "(a) gloo, 2 ranks on one GPU, against the CPU"
for device in cpu cuda; do
  "$dtbench" launch -n 2 -- "$dtbench" "${common[@]}" --epochs 1 --max-steps 6 --device "$device" --backend gloo \
    --out "$tmp/study/gloo-$device" >"$tmp/gloo-$device.log" 2>&1 || fail "(a) $device: $(tail -c 600 "$tmp/gloo-$device.log")"
done
cpu=$(json "$tmp/study/gloo-cpu/summary.json" param_checksum)
gpu=$(json "$tmp/study/gloo-cuda/summary.json" param_checksum)
if [[ -n $cpu && -n $gpu ]] && close "$gpu" "$cpu" 1e-4; then
  echo "ok: (a) param_checksum on the GPU $gpu, on the CPU $cpu"
else
  fail "(a) param_checksum on the GPU '$gpu' differs from the CPU's '$cpu'"
fi

echo "(b) SIGTERM to a GPU run, then --resume"
b_flags=("${common[@]}" --epochs 4 --device cuda --workers 0)
"$dtbench" "${b_flags[@]}" --out "$tmp/study/whole" >"$tmp/whole.log" 2>&1 || fail "(b) uninterrupted: $(tail -c 600 "$tmp/whole.log")"
"$dtbench" "${b_flags[@]}" --out "$tmp/stopped" >"$tmp/stopped.log" 2>&1 &
pids+=($!)
if wait_rows "$tmp/stopped" 40 120 "${pids[-1]}"; then
  kill -TERM "${pids[-1]}"
  finish "${pids[-1]}" 60
  [[ $rc == 75 ]] || fail "(b) SIGTERM: exit '$rc', want 75: $(tail -c 600 "$tmp/stopped.log")"
  [[ $(json "$tmp/stopped/summary.json" status) == interrupted ]] || fail "(b) the stopped run is not 'interrupted'"
  "$dtbench" "${b_flags[@]}" --out "$tmp/stopped" --resume >"$tmp/resumed.log" 2>&1 || fail "(b) --resume: $(tail -c 600 "$tmp/resumed.log")"
  whole=$(json "$tmp/study/whole/summary.json" param_checksum)
  resumed=$(json "$tmp/stopped/summary.json" param_checksum)
  if [[ $(json "$tmp/stopped/summary.json" status) == completed && -n $whole && -n $resumed ]] &&
     close "$resumed" "$whole" 1e-4; then
    echo "ok: (b) resumed at step $(json "$tmp/stopped/summary.json" interrupted_at_step); param_checksum $resumed, uninterrupted $whole"
  else
    fail "(b) the resumed run ($resumed, $(json "$tmp/stopped/summary.json" status)) differs from the uninterrupted one ($whole)"
  fi
else
  fail "(b) the run logged only $(batch_rows "$tmp/stopped") Batch rows: $(tail -c 600 "$tmp/stopped.log")"
fi

echo "(c) nccl at world 1"
"$dtbench" allreduce --backend nccl --topology native --dtype float32,bfloat16 -b 1K -e 16M --check \
  --csv "$tmp/nccl.csv" >"$tmp/nccl.log" 2>&1 || fail "(c) allreduce: $(tail -c 600 "$tmp/nccl.log")"
if [[ -f $tmp/nccl.csv ]]; then
  py - "$tmp/nccl.csv" <<'PY' || fail "(c) allreduce --check: $(cat "$tmp/nccl.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r["wrong"] != "0" or r["backend"] != "nccl"]
print(f"ok: (c) {len(rows)} sizes, every element right" if rows and not bad else f"wrong rows: {bad}")
sys.exit(1 if bad or not rows else 0)
PY
fi
"$dtbench" "${common[@]}" --epochs 2 --max-steps 4 --device cuda --backend nccl --out "$tmp/study/nccl" \
  >"$tmp/nccl-train.log" 2>&1 || fail "(c) nccl training: $(tail -c 600 "$tmp/nccl-train.log")"

echo "(d) the report over the GPU runs"
"$dtbench" report "$tmp/study" --table time_speedup,compute_comm,bandwidth >"$tmp/report.md" 2>"$tmp/report.err" ||
  fail "(d) report: $(cat "$tmp/report.err")"
grep -q "cuda" "$tmp/report.md" || fail "(d) the report shows no cuda run"
py - "$tmp/study" <<'PY' || fail "(d) $(cat "$tmp/report.md")"
import json, os, sys
for run in ("gloo-cuda", "whole", "nccl"):
    config = json.load(open(os.path.join(sys.argv[1], run, "config.json")))
    if config["device"] != "cuda" or config["environment"]["gpus_visible"] < 1:
        sys.exit(f"{run}: config.json says device {config['device']}, {config['environment']['gpus_visible']} GPUs")
PY
grep -c "cuda" "$tmp/report.md" | xargs -I{} echo "ok: (d) the report names cuda on {} lines"
cat "$tmp/report.md"

((failures == 0)) && echo "GPU runs: all checks passed"
exit $((failures > 0))
