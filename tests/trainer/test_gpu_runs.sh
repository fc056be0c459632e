#!/usr/bin/env bash
# The GPU path through the command line (label gpu; skipped, 77, where no GPU is visible):
#  (a) gloo with CUDA tensors: 2 ranks on one GPU train to the parameters of the same 2-rank run on
#      the CPU (buckets are all-reduced on the CPU either way);
#  (b) SIGTERM to a GPU run, then --resume: the finished run equals an uninterrupted GPU run;
#  (c) --backend nccl: `dtbench allreduce --check` at world 1 finds every element right, and a
#      world-1 nccl training run completes;
#  (d) `dtbench report` over these GPU runs prints Tables 1-3 with them (device cuda);
#  (e) a resized run: 2 gloo ranks with CUDA tensors and --sample-ledger stopped by SIGTERM inside
#      epoch 2, resumed by 1 rank (the global batch kept: 1 x 32): completed, config.json's segments say
#      world 2 then 1, `dtbench audit` exits 0, and the report shows one row per segment;
#  (f) the step-time spread on the GPU: `dtbench report --table stragglers` has a row for the 2-rank
#      GPU run (gloo-cuda), its CV and straggler rank measured.
# Usage: test_gpu_runs.sh DTBENCH [--cpu-plumbing]
#   --cpu-plumbing: (e) and (f) alone with --device cpu, so that a machine without a GPU checks this
#   script's own steps (label unit); every GPU claim needs the run without it, on a GPU.
set -uo pipefail
dtbench=$1
dev=cuda
if [[ ${2:-} == --cpu-plumbing ]]; then
  dev=cpu
else
  version=$("$dtbench" --version) || { echo "FAIL: $dtbench --version failed" >&2; exit 1; }
  if grep -q "^gpus visible: 0$" <<<"$version"; then echo "skipped: no GPU is visible"; exit 77; fi
fi
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

# (e) and (f), on $dev.
resized_and_spread() {
  echo "(e) a resized run on $dev: 2 gloo ranks stopped by SIGTERM inside epoch 2, resumed by 1 rank"
  local dir=$tmp/study/resized rc
  # Rows reach the disk at an epoch's end: the SIGTERM follows epoch 1's and lands inside epoch 2 (512
  # steps of 2 x 16).
  local args=("${common[@]/#512/16384}" --epochs 2 --device "$dev" --backend gloo --workers 0 --sample-ledger)
  "$dtbench" launch -n 2 -- "$dtbench" "${args[@]}" --out "$dir" >"$tmp/resized.log" 2>&1 &
  pids+=($!)
  if ! wait_rows "$dir" 1 120 "${pids[-1]}"; then
    fail "(e) the 2-rank run logged only $(batch_rows "$dir") Batch rows: $(tail -c 600 "$tmp/resized.log")"
    return
  fi
  kill -TERM "${pids[-1]}"
  finish "${pids[-1]}" 60
  [[ $rc == 75 ]] || { fail "(e) SIGTERM: exit '$rc', want 75: $(tail -c 600 "$tmp/resized.log")"; return; }
  "$dtbench" "${args[@]}" --out "$dir" --resume >"$tmp/resized-1.log" 2>&1 ||
    { fail "(e) the resume by 1 rank: $(tail -c 600 "$tmp/resized-1.log")"; return; }
  [[ $(json "$dir/summary.json" status) == completed ]] || fail "(e) the resized run is not completed"
  py - "$dir/config.json" <<'PY' || fail "(e) config.json's segments are not world 2 then 1 at one global batch"
import json, sys
segments = json.load(open(sys.argv[1]))["segments"]
worlds = [(s["world_size"], s["batch_size"], s["global_batch_size"]) for s in segments]
assert worlds == [(2, 16, 32), (1, 32, 32)], worlds
assert segments[1]["resize_latency_s"] is None or segments[1]["resize_latency_s"] > 0, segments[1]
print(f"ok: (e) segments {worlds}, resize latency {segments[1]['resize_latency_s']} s")
PY
  "$dtbench" audit "$dir" >"$tmp/audit.txt" 2>&1 || fail "(e) dtbench audit: $(cat "$tmp/audit.txt")"
  "$dtbench" report "$tmp/study" --table time_speedup >"$tmp/segments.md" 2>&1 || fail "(e) report: $(cat "$tmp/segments.md")"
  [[ $(grep -c "segment [12]/2 of resized" "$tmp/segments.md") == 2 ]] ||
    fail "(e) the report does not show the resized run's two segments: $(cat "$tmp/segments.md")"

  echo "(f) the step-time spread of the 2-rank $dev run"
  "$dtbench" report "$tmp/study" --table stragglers --format csv >"$tmp/stragglers.csv" 2>"$tmp/stragglers.err" ||
    fail "(f) report --table stragglers: $(cat "$tmp/stragglers.err")"
  py - "$tmp/stragglers.csv" <<'PY' || fail "(f) no measured spread for the 2-rank gloo run: $(cat "$tmp/stragglers.csv")"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if "gloo-" in r["id"]]
assert len(rows) == 1, rows
r = rows[0]
assert r["N"] == "2", r
assert float(r["step_cv_pct"]) >= 0 and r["straggler_rank"] in ("0", "1"), r
print(f"ok: (f) {r['id']}: step CV {r['step_cv_pct']} %, straggler rank {r['straggler_rank']} ({r['straggler_share']})")
PY
}

if [[ $dev == cpu ]]; then
  echo "(a) gloo, 2 ranks on the CPU (the run (f) reads)"
  "$dtbench" launch -n 2 -- "$dtbench" "${common[@]}" --epochs 1 --max-steps 6 --device cpu --backend gloo \
    --out "$tmp/study/gloo-cpu" >"$tmp/gloo-cpu.log" 2>&1 || fail "(a) cpu: $(tail -c 600 "$tmp/gloo-cpu.log")"
  resized_and_spread
  ((failures == 0)) && echo "GPU runs' plumbing on the CPU: all checks passed"
  exit $((failures > 0))
fi

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

resized_and_spread

((failures == 0)) && echo "GPU runs: all checks passed"
exit $((failures > 0))
