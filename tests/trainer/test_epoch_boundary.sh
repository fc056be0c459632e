#!/usr/bin/env bash
# What rank 0 alone does between steps stays out of every rank's steps (docs/report.md, "What T(N)
# includes"; trainer/trainer.cpp, Note [Rank 0's work between steps]):
#  (a) gloo and mpi, 2 ranks, evaluation of 20,000 test images at each epoch's end (rank 0 alone): rank 1's
#      first step of epoch 2 holds none of rank 0's evaluation (before the ranks met between steps, its
#      all-reduce waited for the evaluation, and its comm_exposed_s and step_s were about eval_s);
#  (b) mpi: an error raised on rank 0 alone (--out names a directory that holds a run) ends every rank at
#      once with rank 0's message on stderr, not after --timeout (300 s) with another rank's;
#  (c) SIGTERM to both ranks during the evaluation stops them at the epoch's end without finishing it:
#      exit 75, status interrupted, epoch 1's test accuracy absent; --resume then completes epoch 2.
# Usage: test_epoch_boundary.sh DTBENCH
set -uo pipefail
dtbench=$1
source "$(dirname "$0")/run_helpers.sh"
start_test

common=(--model lenet --dataset synthetic --synthetic-train-size 512 --batch-size 8 --threads 1 --workers 0 --quiet)

# rank 1's epoch-2 first step against epoch 1's evaluation: NAME DIR
check_first_step() {
  py - "$1" "$2" <<'EOF' || fail "(a) $1: rank 1's first step of epoch 2 holds rank 0's evaluation"
import csv, json, sys
name, run = sys.argv[1], sys.argv[2]
summary = json.load(open(f"{run}/summary.json"))
eval_s = summary["epochs"][0]["eval_s"]
rows = {(int(r["rank"]), int(r["epoch"]), int(r["step"])): r for r in csv.DictReader(open(f"{run}/batches.csv"))}
first = rows[(1, 2, 1)]
step_s, exposed = float(first["step_s"]), float(first["comm_exposed_s"])
print(f"    {name}: epoch 1 eval_s {eval_s:.3f}; rank 1 epoch 2 step 1: step_s {step_s:.4f}, comm_exposed_s {exposed:.4f}")
# The evaluation of 20,000 images takes far longer than a LeNet step of 8 images; half of it in one step
# can only be the wait for it.
sys.exit(0 if summary["status"] == "completed" and eval_s > 0.2 and step_s < eval_s / 2 else 1)
EOF
}

echo "(a) rank 0's evaluation is in no rank's step"
"$dtbench" launch -n 2 -- "$dtbench" train "${common[@]}" --synthetic-test-size 20000 --epochs 2 --max-steps 3 \
  --out "$tmp/gloo" >"$tmp/gloo.log" 2>&1 || fail "(a) gloo run failed: $(tail -c 600 "$tmp/gloo.log")"
[[ -f $tmp/gloo/summary.json ]] && check_first_step gloo "$tmp/gloo"
if command -v mpirun >/dev/null; then
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$dtbench" train --backend mpi "${common[@]}" \
    --synthetic-test-size 20000 --epochs 2 --max-steps 3 --out "$tmp/mpi" >"$tmp/mpi.log" 2>&1 ||
    fail "(a) mpi run failed: $(tail -c 600 "$tmp/mpi.log")"
  [[ -f $tmp/mpi/summary.json ]] && check_first_step mpi "$tmp/mpi"

  echo "(b) mpi: an error on rank 0 alone ends the job at once, with its message"
  start=$(date +%s)
  timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$dtbench" train --backend mpi \
    "${common[@]}" --epochs 1 --max-steps 2 --out "$tmp/mpi" >"$tmp/again.log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  # The default --timeout is 300 s: a job still waiting at 120 s is the hang.
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "(b) mpirun ended with $rc after ${elapsed}s (want a failure before the timeout)"
  grep -q 'already holds a run' "$tmp/again.log" ||
    fail "(b) rank 0's error is not on stderr: $(head -c 600 "$tmp/again.log")"
  [[ $failures -eq 0 ]] && echo "ok: (b) mpirun exited $rc after ${elapsed}s: $(grep -m1 'already holds' "$tmp/again.log" | head -c 200)"
else
  echo "(a, b) mpi parts skipped: mpirun is not installed"
fi

echo "(c) SIGTERM during rank 0's evaluation stops both ranks at the epoch's end"
# ResNet-18 evaluates 2,000 test images in seconds a batch of 100 on one thread; its steps are few.
c_flags=(train --model resnet18 --dataset synthetic --synthetic-train-size 64 --synthetic-test-size 2000
         --batch-size 8 --epochs 2 --max-steps 2 --threads 1 --workers 0 --quiet --timeout 120 --out "$tmp/term")
port=$(( 20000 + RANDOM % 20000 ))
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$dtbench" "${c_flags[@]}" \
    >"$tmp/term.$r.out" 2>"$tmp/term.$r.err" &
  pids+=($!)
done
# Epoch 1's rows reach batches.csv when the ranks gather them, just before rank 0 evaluates.
for _ in $(seq 1 1200); do
  [[ -f $tmp/term/batches.csv && $(wc -l <"$tmp/term/batches.csv") -ge 5 ]] && break
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.05
done
sleep 0.5
kill -TERM "${pids[0]}" "${pids[1]}" 2>/dev/null
for r in 0 1; do
  finish "${pids[r]}" 60
  [[ $rc == 75 ]] || fail "(c) rank $r exited '$rc' on SIGTERM during the evaluation (want 75): $(tail -c 400 "$tmp/term.$r.err")"
done
py - "$tmp/term" <<'EOF' || fail "(c) the evaluation was not cut, or the run did not stop at the epoch's end"
import json, sys
run = sys.argv[1]
summary = json.load(open(f"{run}/summary.json"))
state = json.load(open(f"{run}/checkpoint/state.json"))
epochs = summary["epochs"]
print(f"    status {summary['status']}, epochs recorded {len(epochs)}, epoch 1 test_accuracy "
      f"{epochs[0].get('test_accuracy') if epochs else '-'}, checkpoint at epoch {state['epoch']} step {state['steps_done']}")
ok = (summary["status"] == "interrupted" and len(epochs) == 1 and epochs[0].get("test_accuracy") is None
      and state["epoch"] == 2 and state["steps_done"] == 0)
sys.exit(0 if ok else 1)
EOF
port=$(( 20000 + RANDOM % 20000 ))
resumed=()
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$dtbench" "${c_flags[@]}" --resume \
    >"$tmp/resume.$r.out" 2>"$tmp/resume.$r.err" &
  pids+=($!)
  resumed+=($!)
done
for r in 0 1; do
  finish "${resumed[r]}" 120
  [[ $rc == 0 ]] || fail "(c) resumed rank $r exited '$rc': $(tail -c 400 "$tmp/resume.$r.err")"
done
py - "$tmp/term" <<'EOF' || fail "(c) the resumed run did not complete epoch 2 alone"
import csv, json, sys
summary = json.load(open(f"{sys.argv[1]}/summary.json"))
rows = list(csv.DictReader(open(f"{sys.argv[1]}/batches.csv")))
epochs = [e["epoch"] for e in summary["epochs"]]
print(f"    resumed: status {summary['status']}, epochs {epochs}, {len(rows)} rows")
sys.exit(0 if summary["status"] == "completed" and epochs == [1, 2] and len(rows) == 8 else 1)
EOF

[[ $failures -eq 0 ]] && echo "ok: the ranks meet between steps" || exit 1
