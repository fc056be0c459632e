#!/bin/bash
# dtbench sweep --launcher slurm on a private one-node Slurm: a 2x2 grid (batch x world) of tiny
# LeNet runs is submitted as 4 jobs through slurm/train_cpu.sbatch, waited for and reported (exit
# 0, 4 completed points, jobs.csv, Table 1 with speedups); the same sweep again skips every point
# and submits nothing; a missing dataset is refused before any job (exit 2); a point failing with a
# data or usage error is not resubmitted (exit 1), one whose run was killed is, once, with its first
# attempt kept aside (and shown failed in jobs.csv); SIGTERM while the jobs run cancels them (exit
# 143); a missing job script or sbatch, or --gpu-type on a CPU point, is a usage error (exit 2) that
# leaves nothing in the sweep's directory. (SIGTERM, not SIGINT: a background job of a script ignores SIGINT.)
#   tests/slurm/test_dtbench_sweep.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
start_slurm
cd "$work" || fail "cd $work"
begin=$SECONDS

train=(--model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 64 --epochs 2
       --max-steps 3 --threads 1 --quiet)
sweep_out=$work/runs
# Every job slurmctld knows (it keeps ended ones for MinJobAge = 600 s).
jobs_known() { scontrol -o show jobs 2>/dev/null | grep -c '^JobId='; }
# run_sweep LOG ARGS...: dtbench sweep --launcher slurm ARGS, output in LOG; returns its exit code.
run_sweep() {
  local log=$1; shift
  timeout 150 "$DTBENCH" sweep --launcher slurm "$@" >"$log" 2>&1
}
show() { echo "---- $1 ----" >&2; tail -n 40 "$1" >&2; }

info "sweep 1: 4 points as 4 jobs"
run_sweep "$work/sweep1.txt" --out "$sweep_out" --grid batch=8,16 --grid world=1,2 -- "${train[@]}"
rc=$?
cat "$work/sweep1.txt"
[[ $rc == 0 ]] || { show "$sweep_out/batch8-world2.log"; fail "the sweep exited $rc, want 0"; }
[[ $(grep -c 'submitted as job' "$work/sweep1.txt") == 4 ]] || fail "want 4 submissions"
for name in batch8-world1 batch8-world2 batch16-world1 batch16-world2; do
  [[ $(run_status "$sweep_out/$name") == completed ]] || { show "$sweep_out/$name.log"; fail "$name did not complete"; }
  grep -q "^==== dtbench sweep: $name attempt 1 " "$sweep_out/$name.log" || fail "$name.log lacks the attempt header"
  grep -q "dtbench-job\[.*completed" "$sweep_out/$name.log" || fail "$name.log lacks the job's own output"
  [[ $(grep -cE "^$name +completed" "$work/sweep1.txt") == 1 ]] || fail "$name is not reported completed"
done
grep -q 'batch8-world2 .*submitted as job' "$work/sweep1.txt" || fail "no submission line for batch8-world2"
rows=$(tail -n +2 "$sweep_out/jobs.csv" | grep -c ',completed,')
[[ $rows == 4 && $(tail -n +2 "$sweep_out/jobs.csv" | wc -l) == 4 ]] || fail "jobs.csv should hold 4 completed rows: $(cat "$sweep_out/jobs.csv")"
# The speedup column found by its header, not by position.
speedups=$(awk '/Table 1/{t=1; next} /Table 2/{t=0}
  t && /^\| model/ { n = split($0, h, "|"); for (i = 1; i <= n; i++) { gsub(/ /, "", h[i]); if (h[i] == "speedup") c = i } }
  t && /^\| lenet/ { split($0, f, "|"); if (c && f[c] ~ /[0-9]\.[0-9]/) k++ } END {print k+0}' "$work/sweep1.txt")
[[ $speedups == 4 ]] || fail "the printed Table 1 should have 4 rows with a speedup, found $speedups"
grep -q "Table 3" "$sweep_out/report.md" || fail "report.md lacks Table 3"

info "sweep 2: the same grid again submits nothing"
known=$(jobs_known)
before=$(cd "$sweep_out" && md5sum ./*/summary.json)
run_sweep "$work/sweep2.txt" --out "$sweep_out" --grid batch=8,16 --grid world=1,2 -- "${train[@]}"
rc=$?
cat "$work/sweep2.txt"
[[ $rc == 0 ]] || fail "the second sweep exited $rc, want 0"
[[ $(grep -c 'skipped (completed)' "$work/sweep2.txt") == 4 ]] || fail "want 4 skipped points"
! grep -q 'submitted as job' "$work/sweep2.txt" || fail "the second sweep submitted a job"
[[ $(jobs_known) == "$known" ]] || fail "Slurm knows $(jobs_known) jobs after the second sweep, $known before"
[[ $(cd "$sweep_out" && md5sum ./*/summary.json) == "$before" ]] || fail "the second sweep changed a run"
[[ -z $(find "$sweep_out" -name '*.attempt-*') ]] || fail "the second sweep moved a completed run aside"

info "sweep 3: a mistyped train flag or a missing dataset is refused before any job; a point failing with a data error is not resubmitted"
# A usage error in the train flags (an unknown model) is found before anything is submitted: exit 2, no
# job, no directory; so is a data folder without the dataset (the jobs would wait in the queue, then
# fail). A point that fails for want of good data (exit 1, "data error": files that are no CIFAR-10)
# would fail the same way every time, so it fails at once with its message.
bad=$work/bad
known=$(jobs_known)
run_sweep "$work/sweep3-usage.txt" --out "$bad" --grid model=lenet,nosuchmodel -- --epochs 1 --max-steps 2
rc=$?
[[ $rc == 2 ]] || fail "the sweep with a mistyped model exited $rc, want 2: $(cat "$work/sweep3-usage.txt")"
grep -q "point model_nosuchmodel: unknown model 'nosuchmodel'" "$work/sweep3-usage.txt" ||
  fail "the refusal does not name the point and the model: $(cat "$work/sweep3-usage.txt")"
[[ $(jobs_known) == "$known" && ! -e $bad ]] || fail "the refused sweep submitted a job or made $bad"
run_sweep "$work/sweep3-nodata.txt" --out "$bad" --grid dataset=synthetic,cifar10 --grid model=lenet -- \
  --data-dir "$work/nothing-here" --epochs 1
rc=$?
[[ $rc == 2 ]] || fail "the sweep without its data exited $rc, want 2: $(cat "$work/sweep3-nodata.txt")"
grep -q "point dataset_cifar10-model_lenet: --data-dir $work/nothing-here holds no complete CIFAR-10" \
  "$work/sweep3-nodata.txt" || fail "the refusal does not name the point and the folder: $(cat "$work/sweep3-nodata.txt")"
grep -q "dtbench train --dataset cifar10 --download --data-dir $work/nothing-here" "$work/sweep3-nodata.txt" ||
  fail "the refusal does not say how to fetch the data: $(cat "$work/sweep3-nodata.txt")"
[[ $(jobs_known) == "$known" && ! -e $bad ]] || fail "the sweep without its data submitted a job or made $bad"
mkdir -p "$work/damaged-data/cifar-10-batches-bin"
for f in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do
  echo damaged >"$work/damaged-data/cifar-10-batches-bin/$f.bin"
done
run_sweep "$work/sweep3.txt" --out "$bad" --grid dataset=synthetic,cifar10 --grid model=lenet \
  --retries 1 -- --data-dir "$work/damaged-data" --synthetic-train-size 256 --synthetic-test-size 64 --epochs 1 \
  --max-steps 2 --batch-size 16 --threads 1 --quiet
rc=$?
cat "$work/sweep3.txt"
[[ $rc == 1 ]] || fail "the sweep with failing points exited $rc, want 1"
good=dataset_synthetic-model_lenet failing=dataset_cifar10-model_lenet
[[ $(grep -c "^$failing .*submitted as job" "$work/sweep3.txt") == 1 ]] || fail "the point without data should be submitted once"
grep -q "^$failing .*failed (data error)" "$work/sweep3.txt" || fail "$failing is not shown as a data error"
[[ $(grep -c "^$good .*submitted as job" "$work/sweep3.txt") == 1 ]] || fail "the good point should be submitted once"
[[ $(run_status "$bad/$good") == completed ]] || { show "$bad/$good.log"; fail "the good point did not complete"; }
[[ ! -e $bad/$failing.attempt-1 ]] || fail "the point without good data ran twice"
grep -q "data_batch_1.bin" "$bad/$failing.log" || fail "the error is not in the log"
grep -q "^$failing,.*,failed,.*data_batch_1.bin" "$bad/jobs.csv" || fail "the error is not in jobs.csv: $(cat "$bad/jobs.csv")"

info "sweep 3b: a point whose run is killed is resubmitted once and completes (a run of several seconds: the kill must find it)"
killed=$work/killed
timeout 150 "$DTBENCH" sweep --launcher slurm --out "$killed" --grid batch=8 --retries 1 -- --model lenet \
  --dataset synthetic --synthetic-train-size 32768 --synthetic-test-size 64 --epochs 1 --max-steps 3000 --threads 1 \
  --quiet >"$work/sweep3b.txt" 2>&1 &
pid=$!
running() { [[ $(run_status "$killed/batch8") == running ]] || ! kill -0 "$pid" 2>/dev/null; }
wait_for 60 "the point's run to start" running
pkill -KILL -f -- "--out $killed/batch8( |$)" || fail "found no run of the point to kill"
wait "$pid"
rc=$?
cat "$work/sweep3b.txt"
[[ $rc == 0 ]] || { show "$killed/batch8.log"; fail "the sweep whose run was killed once exited $rc, want 0"; }
[[ $(grep -c 'submitted as job' "$work/sweep3b.txt") == 2 ]] || fail "the killed point should be submitted twice"
grep -q "^batch8 .*failed (retrying)" "$work/sweep3b.txt" || fail "the killed attempt is not shown retrying"
[[ -d $killed/batch8.attempt-1 ]] || fail "the killed attempt was not kept aside"
[[ $(run_status "$killed/batch8") == completed ]] || fail "the resubmitted point did not complete"
grep -qE "^batch8\.attempt-1,.*,failed,died without recording its end" "$killed/jobs.csv" ||
  fail "jobs.csv does not show the killed attempt failed: $(cat "$killed/jobs.csv")"

info "sweep 4: SIGTERM while the jobs run cancels them"
slow=(--model lenet --dataset synthetic --synthetic-train-size 65536 --synthetic-test-size 64 --epochs 50
      --threads 1 --quiet)
"$DTBENCH" sweep --launcher slurm --slurm-timeout 60 --out "$work/stopped" --grid batch=8 --grid world=1,2 -- \
  "${slow[@]}" >"$work/sweep4.txt" 2>&1 &
pid=$!
submitted_both() { [[ $(grep -c 'submitted as job' "$work/sweep4.txt") == 2 ]] || ! kill -0 "$pid" 2>/dev/null; }
wait_for 30 "the slow sweep to submit its jobs" submitted_both
ids=$(sed -n 's/.*submitted as job \([0-9]*\),.*/\1/p' "$work/sweep4.txt" | paste -sd,)
one_running() { squeue -h -j "$ids" -o %T 2>/dev/null | grep -q RUNNING || ! kill -0 "$pid" 2>/dev/null; }
wait_for 30 "a job of $ids to run" one_running
kill -TERM "$pid"
wait "$pid"
rc=$?
cat "$work/sweep4.txt"
[[ $rc == 143 ]] || fail "the sweep stopped by SIGTERM exited $rc, want 143"
gone() { [[ -z $(squeue -h -j "$ids" -o %i 2>/dev/null) ]]; }
wait_for 30 "the cancelled jobs $ids to leave the queue" gone
for id in ${ids//,/ }; do
  [[ $(job_state "$id") == CANCELLED ]] || fail "job $id ended $(job_state "$id"), want CANCELLED"
done
[[ -f $work/stopped/jobs.csv ]] || fail "no jobs.csv after SIGTERM"
[[ $(grep -c 'interrupted' "$work/sweep4.txt") -ge 2 ]] || fail "the cancelled points are not reported interrupted"

info "usage errors"
expect2() {
  local pattern=$1; shift
  local output rc
  output=$("$@" 2>&1); rc=$?
  [[ $rc == 2 ]] && grep -qE -- "$pattern" <<<"$output" || fail "$* -> exit $rc (want 2 and /$pattern/): $output"
}
expect2 "--slurm-script $work/none.sbatch is not a file" \
  "$DTBENCH" sweep --launcher slurm --slurm-script "$work/none.sbatch" --out "$work/u1" --grid batch=8 -- "${train[@]}"
expect2 "job script $work/noslurm/train_cpu.sbatch does not exist; set DTBENCH_SLURM_DIR" \
  env DTBENCH_SLURM_DIR="$work/noslurm" "$DTBENCH" sweep --launcher slurm --out "$work/u2" --grid batch=8 -- "${train[@]}"
expect2 "sbatch is not in PATH" \
  env PATH=/nonexistent "$DTBENCH" sweep --launcher slurm --out "$work/u3" --grid batch=8 -- "${train[@]}"
expect2 "--gpu-type types the GPUs .* point batch8 runs on the CPU" \
  "$DTBENCH" sweep --launcher slurm --gpu-type a100 --out "$work/u4" --grid batch=8 -- "${train[@]}"
# Refused before the sweep takes its directory's lock: nothing is left behind, not even the lock file.
for u in u1 u2 u3 u4; do [[ ! -e $work/$u ]] || fail "a usage error left $work/$u behind: $(ls -A "$work/$u")"; done

echo "PASS: dtbench sweep --launcher slurm ($((SECONDS - begin)) s)"
