#!/usr/bin/env bash
# Whether T(N) depends on rank 0's end-of-epoch evaluation (docs/report.md, "What T(N) includes"), and what
# Table 3 says of a PowerSGD run whose --compress-start falls inside the measured epoch, for one dtbench
# binary. Run it with two builds (before and after a change) on one quiet machine and compare.
#   1. The main job's study (scripts/main_job.sh: ResNet-18, synthetic data, batch 32 and 64 per rank, 1 and
#      2 ranks, 2 epochs cut to 4 steps, one thread a rank) twice: with evaluation (its 256 test images, and
#      2,000 to make the evaluation long) and with --no-eval. Prints Tables 1 and 2 of each.
#   2. LeNet on 2 ranks (ring), one epoch of 8 steps, --compress powersgd with --compress-start 4 (half the
#      epoch uncompressed) and 8 (none compressed), beside --compress none: Table 3.
# Usage: scripts/bench_epoch_boundary.sh DTBENCH OUT   (OUT must not exist; about 6 minutes on 2 cores)
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 DTBENCH OUT  (OUT: a directory to create for the runs)" >&2
  exit 2
fi
dtbench=$(realpath "$1")
out=$2
[[ -x $dtbench ]] || { echo "$0: $1 is not an executable dtbench" >&2; exit 2; }
[[ ! -e $out ]] || { echo "$0: $out exists; name a new directory" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")

study() {  # study NAME FLAGS...: the main job's four runs with FLAGS, then Tables 1 and 2
  local name=$1
  shift
  local common=(--model resnet18 --dataset synthetic --epochs 2 --max-steps 4 --lr 0.02 --threads 1 --quiet "$@")
  for batch in 32 64; do
    "$dtbench" train "${common[@]}" --batch-size "$batch" --out "$out/$name/b$batch-n1" > /dev/null
    "$dtbench" launch -n 2 -- "$dtbench" train "${common[@]}" --batch-size "$batch" --topology ring \
      --out "$out/$name/b$batch-n2" > /dev/null
  done
  echo "== $name ($*)"
  "$dtbench" report "$out/$name" --table time_speedup,compute_comm
  for batch in 32 64; do
    /usr/bin/python3 - "$out/$name/b$batch-n2" <<'PY'
import csv, json, sys
run = sys.argv[1]
summary = json.load(open(f"{run}/summary.json"))
rows = [r for r in csv.DictReader(open(f"{run}/batches.csv")) if r["epoch"] == "2" and r["step"] == "1"]
evals = [round(e.get("eval_s") or 0, 3) for e in summary["epochs"]]
print(f"{run.rsplit('/', 1)[-1]}: eval_s per epoch {evals}; epoch 2 step 1 step_s / comm_exposed_s per rank: " +
      ", ".join(f"rank {r['rank']} {float(r['step_s']):.3f} / {float(r['comm_exposed_s']):.3f}" for r in rows))
PY
  done
  echo
}

study eval-256 --synthetic-test-size 256
study eval-2000 --synthetic-test-size 2000
study no-eval --no-eval

lenet=(--model lenet --dataset synthetic --synthetic-train-size 512 --no-eval --epochs 1 --max-steps 8 --batch-size 8
       --threads 1 --quiet --topology ring)
"$dtbench" launch -n 2 -- "$dtbench" train "${lenet[@]}" --out "$out/powersgd/none" > /dev/null
for start in 4 8; do
  "$dtbench" launch -n 2 -- "$dtbench" train "${lenet[@]}" --compress powersgd --compress-start "$start" \
    --out "$out/powersgd/start$start" > /dev/null
done
echo "== LeNet, 2 ranks, ring, 8 steps: --compress none, powersgd --compress-start 4 and 8"
"$dtbench" report "$out/powersgd" --table bandwidth
