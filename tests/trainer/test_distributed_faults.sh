#!/usr/bin/env bash
# Failures, preemption and resume of `dtbench train` (docs/design.md, "Signals, failures and resume"):
#  (a) a rank killed with SIGKILL ends the run on the others within the deadline: non-zero exit,
#      a message naming the dead rank, summary.json "failed" with an "error";
#  (b) SIGTERM to every rank of a 2-rank run: all exit 75 after the same step with a checkpoint and
#      status "interrupted"; --resume finishes the run, which then equals an uninterrupted one
#      (parameters, every batch loss, one batches.csv row per (rank, epoch, step)). The run compresses
#      with PowerSGD from step 5, so each rank's residuals and factors travel through the checkpoint
#      (sync_rank<R>.pt) too;
#  (c) a 1-rank run killed with SIGKILL between checkpoints resumes from its last checkpoint; rows
#      written after that checkpoint are cut back and written again;
#  (d) --resume usage errors: no run, no checkpoint, different flags.
# Usage: distributed_faults_test.sh path/to/dtbench
set -uo pipefail
dtbench=$1
source "$(dirname "$0")/run_helpers.sh"
start_test
start_all=$(date +%s)

synthetic=(train --model lenet --dataset synthetic --synthetic-test-size 64 --threads 1 --workers 0 --quiet --no-eval
           --batch-size 8)

# start_rank RANK WORLD PORT LOG ARGS...: one rank in the background, its pid appended to `pids`.
start_rank() {
  local rank=$1 world=$2 port=$3 log=$4
  shift 4
  RANK=$rank WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$dtbench" "$@" >"$log.out" 2>"$log.err" &
  pids+=($!)
}

# stop_from FIRST: SIGKILLs the background processes started since pids[FIRST] and reaps them.
stop_from() {
  for p in "${pids[@]:$1}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}


# same_run RESUMED REFERENCE ROWS_PER_RANK WORLD: prints a line; exits 1 unless the resumed run
# equals the uninterrupted one: completed, param_checksum (relative 1e-9), every rank's checksum,
# batches.csv with exactly one row per (rank, epoch, step) and the same keys, and every Batch and
# Epoch row of train_history.log with the same loss and accuracy.
same_run() {
  py - "$@" <<'EOF'
import csv, json, sys
run_dir, ref_dir, rows_per_rank, world = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
problems = []
run = json.load(open(f"{run_dir}/summary.json"))
ref = json.load(open(f"{ref_dir}/summary.json"))
if run.get("status") != "completed":
    problems.append(f"status {run.get('status')!r} (want 'completed')")
a, b = ref.get("param_checksum"), run.get("param_checksum")
if a is None or b is None:
    problems.append(f"param_checksum missing (resumed {b!r}, uninterrupted {a!r})")
else:
    rel = abs(a - b) / max(abs(a), 1e-300)
    if rel > 1e-9:
        problems.append(f"param_checksum {b!r} differs from the uninterrupted run's {a!r} (relative {rel:.3g})")
if world > 1 and run.get("param_checksums") != ref.get("param_checksums"):
    problems.append(f"param_checksums {run.get('param_checksums')!r} (uninterrupted: {ref.get('param_checksums')!r})")

def keys(d):
    with open(f"{d}/batches.csv", newline="") as f:
        return [(int(r["rank"]), int(r["epoch"]), int(r["step"]), int(r["samples"])) for r in csv.DictReader(f)]
run_keys, ref_keys = keys(run_dir), keys(ref_dir)
triples = [k[:3] for k in run_keys]
dups = sorted({t for t in triples if triples.count(t) > 1})
if dups:
    problems.append(f"batches.csv repeats (rank, epoch, step) {dups[:5]}")
if len(run_keys) != rows_per_rank * world:
    problems.append(f"batches.csv has {len(run_keys)} rows (want {rows_per_rank} x {world} ranks)")
if sorted(run_keys) != sorted(ref_keys):
    problems.append("batches.csv (rank, epoch, step, samples) differ from the uninterrupted run's")

def history(d):
    with open(f"{d}/train_history.log", newline="") as f:
        return [(r["Type"], r["Epoch"], r["Step"], r["Loss"], r["Accuracy"]) for r in csv.DictReader(f)]
run_h, ref_h = history(run_dir), history(ref_dir)
batch_steps = [int(h[2]) for h in run_h if h[0] == "Batch"]
if batch_steps != list(range(1, rows_per_rank + 1)):
    problems.append(f"train_history.log Batch steps are not 1..{rows_per_rank} once each "
                    f"({len(batch_steps)} rows, repeated: {sorted({s for s in batch_steps if batch_steps.count(s) > 1})[:5]})")
elif run_h != ref_h:
    first = next(i for i, (x, y) in enumerate(zip(run_h + [None] * len(ref_h), ref_h + [None] * len(run_h))) if x != y)
    problems.append(f"train_history.log differs from the uninterrupted run's at row {first + 1}: "
                    f"{run_h[first] if first < len(run_h) else None} vs {ref_h[first] if first < len(ref_h) else None}")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"param_checksum {b!r} ({'exactly equal' if a == b else f'relative {rel:.2g}'}), "
      f"{len(run_keys)} batch rows, {len(batch_steps)} identical batch losses")
EOF
}

# ---------------------------------------------------------------------------------------------
echo "(a) SIGKILL of rank 1 of 3 gloo ranks mid-run"
dir=$tmp/killed
port=$(( 20000 + RANDOM % 20000 ))
first=${#pids[@]}
for r in 0 1 2; do
  start_rank $r 3 $port "$tmp/killed.$r" "${synthetic[@]}" --synthetic-train-size 512 --epochs 1000 --timeout 5 \
    --out "$dir"
done
if ! wait_rows "$dir" 20 60 "${pids[first]}"; then
  fail "(a) rank 0 logged only $(batch_rows "$dir") Batch rows (60 s at most)"; cat "$tmp"/killed.*.err >&2
  stop_from "$first"
else
  kill -9 "${pids[first + 1]}"
  wait "${pids[first + 1]}" 2>/dev/null
  start=$(date +%s)
  for r in 0 2; do
    finish "${pids[first + r]}" 20
    elapsed=$(( $(date +%s) - start ))
    if [[ $rc == hung || $rc -eq 0 || $rc -ge 124 ]]; then
      fail "(a) rank $r ended with '$rc' after the kill (want a failure exit code in 1..123)"
    elif [[ $elapsed -gt 15 ]]; then
      fail "(a) rank $r took ${elapsed}s to stop after its peer died (--timeout 5)"
    fi
    if ! grep -q 'rank 1\b' "$tmp/killed.$r.err"; then
      fail "(a) rank $r's message does not name rank 1: $(head -c 600 "$tmp/killed.$r.err")"
    fi
    echo "    rank $r: exit $rc after ${elapsed}s: $(head -c 300 "$tmp/killed.$r.err")"
  done
  status=$(json "$dir/summary.json" status)
  error=$(json "$dir/summary.json" error)
  [[ $status == failed ]] || fail "(a) summary.json status '$status' (want 'failed')"
  [[ -n $error ]] || fail "(a) summary.json has no \"error\""
  [[ $status == failed && -n $error ]] && echo "ok: (a) survivors failed in ${elapsed}s; summary.json failed: ${error:0:120}"
fi

# ---------------------------------------------------------------------------------------------
echo "(b) SIGTERM to both ranks of a 2-rank run, then --resume"
b_flags=("${synthetic[@]}" --synthetic-train-size 512 --epochs 10 --seed 3 --lr 0.02 --timeout 20
         --checkpoint-every 0 --compress powersgd --compress-start 4)  # 32 steps per epoch on 2 ranks
dir=$tmp/preempted
port=$(( 20000 + RANDOM % 20000 ))
first=${#pids[@]}
for r in 0 1; do start_rank $r 2 $port "$tmp/preempted.$r" "${b_flags[@]}" --out "$dir"; done
if ! wait_rows "$dir" 40 60 "${pids[first]}"; then
  fail "(b) rank 0 logged only $(batch_rows "$dir") Batch rows (60 s at most)"; cat "$tmp"/preempted.*.err >&2
  stop_from "$first"
else
  kill -TERM "${pids[first]}" "${pids[first + 1]}"
  stop_ok=1
  for r in 0 1; do
    finish "${pids[first + r]}" 30
    [[ $rc == 75 ]] || { fail "(b) rank $r exited '$rc' on SIGTERM (want 75): $(tail -c 400 "$tmp/preempted.$r.err")"; stop_ok=0; }
  done
  status=$(json "$dir/summary.json" status)
  at_step=$(json "$dir/summary.json" interrupted_at_step)
  [[ $status == interrupted ]] || { fail "(b) summary.json status '$status' after SIGTERM (want 'interrupted')"; stop_ok=0; }
  [[ -f $dir/checkpoint/state.json ]] || { fail "(b) no checkpoint/state.json after SIGTERM"; stop_ok=0; }
  for r in 0 1; do
    [[ -s $dir/checkpoint/sync_rank$r.pt ]] || { fail "(b) no checkpoint/sync_rank$r.pt (PowerSGD's state)"; stop_ok=0; }
  done
  rows=$(( $(wc -l <"$dir/batches.csv") - 1 ))
  [[ -n $at_step && $rows -eq $((at_step * 2)) ]] ||
    { fail "(b) interrupted after step '$at_step' but batches.csv holds $rows rows (want 2 per step)"; stop_ok=0; }
  [[ $stop_ok -eq 1 ]] && echo "ok: (b) both ranks exited 75 after step $at_step, checkpoint written, status interrupted"

  port=$(( 20000 + RANDOM % 20000 ))
  first=${#pids[@]}
  for r in 0 1; do start_rank $r 2 $port "$tmp/resumed.$r" "${b_flags[@]}" --out "$dir" --resume; done
  port=$(( 20000 + RANDOM % 20000 ))
  for r in 0 1; do start_rank $r 2 $port "$tmp/whole.$r" "${b_flags[@]}" --out "$tmp/whole"; done
  ok=1
  for r in 0 1; do
    finish "${pids[first + r]}" 120
    [[ $rc == 0 ]] || { fail "(b) resumed rank $r exited '$rc': $(tail -c 400 "$tmp/resumed.$r.err")"; ok=0; }
    finish "${pids[first + 2 + r]}" 120
    [[ $rc == 0 ]] || { fail "(b) uninterrupted rank $r exited '$rc': $(tail -c 400 "$tmp/whole.$r.err")"; ok=0; }
  done
  if [[ $ok -eq 1 ]]; then
    if result=$(same_run "$dir" "$tmp/whole" 320 2); then
      echo "ok: (b) the resumed run equals the uninterrupted one: $result"
    else
      fail "(b) resumed run: $result"
    fi
  fi
fi

# ---------------------------------------------------------------------------------------------
echo "(c) SIGKILL of a 1-rank run with --checkpoint-every 3, then --resume"
c_flags=("${synthetic[@]}" --synthetic-train-size 512 --epochs 6 --seed 5 --lr 0.02 --checkpoint-every 3)  # 64 steps/epoch
dir=$tmp/crashed
first=${#pids[@]}
"$dtbench" "${c_flags[@]}" --out "$dir" >"$tmp/crashed.out" 2>"$tmp/crashed.err" &
pids+=($!)
pid=$!
"$dtbench" "${c_flags[@]}" --out "$tmp/whole1" >"$tmp/whole1.out" 2>&1 &
pids+=($!)
whole_pid=$!
if ! wait_rows "$dir" 80 60 "$pid"; then
  fail "(c) the run logged only $(batch_rows "$dir") Batch rows (60 s at most)"; cat "$tmp/crashed.err" >&2
  stop_from "$first"
else
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  status=$(json "$dir/summary.json" status)
  checkpoint_step=$(json "$dir/checkpoint/state.json" global_step)
  [[ $status == running ]] || fail "(c) summary.json status '$status' after SIGKILL (want 'running')"
  [[ -n $checkpoint_step && $checkpoint_step -ge 3 ]] || fail "(c) no checkpoint after $(batch_rows "$dir") steps"
  # What a crash leaves after the last checkpoint: rows of later steps, the last one cut short.
  # (Rows reach the disk at checkpoints and epoch ends; these stand for the ones a crash between
  # a flush and the next checkpoint leaves behind.)
  before=$(( $(wc -l <"$dir/batches.csv") - 1 ))
  logged=$(batch_rows "$dir")
  tail -n 1 "$dir/batches.csv" >>"$dir/batches.csv"
  printf '0,%s,99,8,0.0001' "$(json "$dir/checkpoint/state.json" epoch)" >>"$dir/batches.csv"
  printf '%s,Batch,1,%s,9.999999,0.000000,1.0\n' "$(date +%s)" "$((${checkpoint_step:-0} + 1))" \
    >>"$dir/train_history.log"
  echo "    killed after $logged Batch rows, checkpoint at step $checkpoint_step, $before batches.csv rows;" \
       "appended a repeated and a cut-short batches.csv row and a stale Batch row"
  timeout --kill-after=10 120 "$dtbench" "${c_flags[@]}" --out "$dir" --resume >"$tmp/crashed.resume" 2>&1
  resume_rc=$?
  finish "$whole_pid" 120
  whole_rc=$rc
  if [[ $resume_rc != 0 ]]; then
    fail "(c) --resume exited $resume_rc: $(tail -n 5 "$tmp/crashed.resume")"
  elif [[ $whole_rc != 0 ]]; then
    fail "(c) the uninterrupted run exited '$whole_rc': $(tail -n 5 "$tmp/whole1.out")"
  elif result=$(same_run "$dir" "$tmp/whole1" 384 1); then
    echo "ok: (c) resumed from step $checkpoint_step equals the uninterrupted run: $result"
  else
    fail "(c) resumed run: $result"
  fi
fi

# ---------------------------------------------------------------------------------------------
echo "(d) --resume usage errors"
# expect_resume CODES PATTERN ARGS...: `dtbench ARGS --resume` exits with one of CODES (e.g. "1 2")
# and prints something matching the extended regex PATTERN.
expect_resume() {
  local codes=$1 pattern=$2 out rc
  shift 2
  out=$(timeout --kill-after=10 60 "$dtbench" "$@" --resume 2>&1)
  rc=$?
  if [[ " $codes " != *" $rc "* ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    fail "(d) dtbench $* --resume -> exit $rc (want exit ${codes// / or } and a message matching '$pattern'):" \
         "$(head -c 600 <<<"$out")"
  else
    echo "ok: (d) exit $rc: $(head -c 200 <<<"$out")"
  fi
}
small=("${synthetic[@]}" --synthetic-train-size 64 --epochs 1)
mkdir "$tmp/empty"
expect_resume "1 2" "$tmp/empty.*(config\.json|no run|checkpoint)" "${small[@]}" --out "$tmp/empty"
expect_resume "1 2" "$tmp/missing.*(config\.json|no run|does not exist|checkpoint)" "${small[@]}" --out "$tmp/missing"
"$dtbench" "${small[@]}" --out "$tmp/finished" >/dev/null 2>&1 || fail "(d) a 1-epoch run failed"
expect_resume "1 2" "already completed" "${small[@]}" --out "$tmp/finished"
if [[ -f $tmp/crashed/summary.json ]]; then
  sums_before=$(md5sum "$tmp/crashed"/*.csv "$tmp/crashed"/*.json "$tmp/crashed"/*.log)
  expect_resume 2 "batch_size" "${c_flags[@]}" --batch-size 16 --out "$tmp/crashed"
  [[ $(md5sum "$tmp/crashed"/*.csv "$tmp/crashed"/*.json "$tmp/crashed"/*.log) == "$sums_before" ]] ||
    fail "(d) a refused --resume changed the run directory"
fi
if [[ -f $tmp/preempted/summary.json ]]; then  # a 2-rank run resumed by 1 rank
  expect_resume 2 "world_size" "${b_flags[@]}" --out "$tmp/preempted"
fi

echo "distributed_faults_test: $failures failure(s), total $(( $(date +%s) - start_all ))s"
exit $((failures > 0))
