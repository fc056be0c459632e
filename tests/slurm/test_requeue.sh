#!/bin/bash
# Preemption on a private one-node Slurm: a 2-rank CPU job from slurm/train_cpu.sbatch gets SIGTERM
# in its second epoch (`scancel --signal=TERM JOBID`: every job step, not the batch script, as
# `--signal=TERM@120` does; SLURM_REQUEUE_TEST_SIGNAL=batch signals the batch script alone, as
# `--signal=B:TERM@120` does, and the script forwards it to the steps), dtbench checkpoints and exits 75, the script requeues the job, the
# job runs again with --resume and completes. Its final param_checksum must equal that of the same
# run uninterrupted (run outside Slurm with `dtbench launch -n 2`), and summary.json must have
# resumed_at.
#   tests/slurm/test_requeue.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
mode=${SLURM_REQUEUE_TEST_SIGNAL:-steps}
case $mode in steps) signal_opts=() ;; batch) signal_opts=(--batch) ;; *) fail "SLURM_REQUEUE_TEST_SIGNAL: steps or batch, not $mode" ;; esac
start_slurm

export DTBENCH RUNS=$work/runs RUN_NAME=preempted
train=(--model lenet --dataset synthetic --synthetic-train-size 16384 --synthetic-test-size 64
       --batch-size 64 --epochs 2 --max-steps 120 --threads 1 --workers 1 --quiet)
cd "$work" || fail "cd $work"
out=$RUNS/$RUN_NAME

info "submitting the job"
job=$(sbatch --parsable --ntasks=2 --cpus-per-task=1 --time=5 --requeue \
  --output="$work/job-%j.out" "$repo/slurm/train_cpu.sbatch" "${train[@]}") || fail "sbatch failed"
log=$work/job-$job.out
running() { [[ $(job_state "$job") == RUNNING ]]; }
wait_for 60 "job $job to start" running
# Epoch 1's rows reach batches.csv at its end: the signal then lands inside epoch 2.
epoch1_done() { [[ $({ wc -l < "$out/batches.csv"; } 2>/dev/null || echo 0) -gt 1 ]] || ! running; }
wait_for 60 "epoch 1 of job $job" epoch1_done
running || fail "job $job ended before it could be signalled (state $(job_state "$job"))"
info "SIGTERM to job $job ($mode)"
scancel --signal=TERM "${signal_opts[@]}" "$job" || fail "scancel failed"

requeued() { [[ $(job_field "$job" Restarts) -ge 1 ]]; }
wait_for 60 "job $job to be requeued" requeued
grep -q 'exit 75' "$log" || fail "the job log does not show dtbench's exit 75"
# Slurm makes a requeued job eligible only 120 s after the requeue (EligibleTime, Reason=BeginTime);
# the test moves its start to now, again while it still says BeginTime (an update made while the
# job was still completing does not stick), and only 3 s after it was first seen pending with no
# CPU allocated on the node: slurmd refuses a credential of the same job issued within the second
# of the revocation ("Job credential revoked"), the race that delay exists to avoid.
node_free() { scontrol -o show node 2>/dev/null | grep -q 'CPUAlloc=0 '; }
pending_since=''
settled() {
  node_free || return 1
  [[ -n $pending_since ]] || pending_since=$SECONDS
  ((SECONDS - pending_since >= 3))
}
finished() {
  case $(job_state "$job") in
    COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) return 0 ;;
    PENDING) [[ $(job_field "$job" Reason) == BeginTime ]] && settled &&
               scontrol update JobId="$job" StartTime=now >/dev/null 2>&1
             return 1 ;;
    *) return 1 ;;
  esac
}
wait_for 120 "job $job to run again and finish" finished
state=$(job_state "$job")
[[ $state == COMPLETED ]] || fail "requeued job $job ended $state"
grep -q 'continuing it with --resume' "$log" || fail "the requeued job did not resume (no --resume in its log)"

info "the same run uninterrupted, outside Slurm"
( cd "$work" && env -u SLURM_CONF timeout 120 "$DTBENCH" launch -n 2 -- "$DTBENCH" train "${train[@]}" --out "$work/reference" ) \
  >"$work/reference.out" 2>&1 || { tail -n 20 "$work/reference.out" >&2; fail "the reference run failed"; }

python3 - "$out/summary.json" "$work/reference/summary.json" <<'PY' || fail "the resumed run differs from the uninterrupted one"
import json, sys
got, ref = (json.load(open(p)) for p in sys.argv[1:3])
assert got["status"] == "completed", f"status {got['status']}"
assert ref["status"] == "completed", f"reference status {ref['status']}"
assert got.get("resumed_at"), "summary.json has no resumed_at"
print(f"param_checksum resumed {got['param_checksum']!r} reference {ref['param_checksum']!r}; resumed_at {got['resumed_at']}")
assert got["param_checksum"] == ref["param_checksum"], "param_checksum differs"
PY
echo "PASS: slurm requeue (job $job: SIGTERM -> exit 75 -> requeue -> --resume -> completed, checksum equal)"
