#!/bin/bash
# Faults across nodes. A 3-node gloo job of slurm/train_multinode.sbatch with --requeue and
# --checkpoint-every loses node2 mid-epoch (`cluster.sh node-down`: its link goes down, then its slurmd
# and every process in it are killed, so no connection closes). Slurm marks node2 DOWN after
# SlurmdTimeout, stops the survivors and requeues the job; after `node-up node2` the job resumes from
# its last checkpoint and completes with the same param_checksum as the run uninterrupted. Then the
# same with `scontrol requeue` mid-epoch. A rank killed on a live node instead stops its peers at once
# (exit 1, naming it and its node; not requeued). Nothing is left running on any node afterwards.
#   tests/experiments/cluster/test_node_failure.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
cluster_up --nodes 3 --rate 1gbit --slurmd-timeout 5

export DTBENCH RUNS=$work/runs
mkdir -p "$RUNS"
cd "$work" || fail "cd $work"
# 86 steps per epoch at batch 32 x 3 ranks; checkpoints every 10 steps and at the epoch's end.
# dtbench's own --timeout (60 s) is longer than Slurm's detection (SlurmdTimeout 5 s plus its ping
# period), so Slurm stops the survivors (docs/cluster.md, "A node that dies").
train=(--model lenet --dataset synthetic --synthetic-train-size 8192 --synthetic-test-size 64 --batch-size 32
       --epochs 2 --max-steps 60 --checkpoint-every 10 --threads 1 --workers 1 --timeout 60 --device cpu --quiet)

info "the run uninterrupted (3 gloo ranks, outside Slurm)"
env -u DTBENCH_CLUSTER -u SLURM_CONF timeout 120 "$DTBENCH" launch -n 3 -- "$DTBENCH" train "${train[@]}" \
  --out "$work/reference" >"$work/reference.out" 2>&1 || fail "the reference run failed"

# Slurm makes a requeued job eligible only 120 s after the requeue (Reason=BeginTime); the test moves
# its start to now once every node is free again for 3 s (slurmd refuses a credential of the same job
# issued within the second of its revocation). See tests/slurm/test_requeue.sh.
nodes_free() { [[ -z $(scontrol -o show node 2>/dev/null | grep -v 'CPUAlloc=0 ') ]]; }
free_since=''
pushed() {
  local job=$1
  case $(job_state "$job") in
    COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) return 0 ;;
    PENDING)
      [[ $(job_field "$job" Reason) == BeginTime ]] || return 1
      if nodes_free; then [[ -n $free_since ]] || free_since=$SECONDS; else free_since=''; return 1; fi
      ((SECONDS - free_since >= 3)) && scontrol update JobId="$job" StartTime=now >/dev/null 2>&1
      return 1 ;;
    *) return 1 ;;
  esac
}

# run_interrupted NAME HOW: submits, waits for the first checkpoint, interrupts (HOW: node-down or
# requeue), brings the job to its end and checks it against the reference.
run_interrupted() {
  local name=$1 how=$2 job out
  out=$RUNS/$name
  job=$(RUN_NAME=$name sbatch --parsable --job-name="$name" --nodes=3 --ntasks-per-node=1 --gres=gpu:1 --cpus-per-task=1 \
    --time=10 --requeue --output="$work/$name.out" "$repo/slurm/train_multinode.sbatch" "${train[@]}") || fail "sbatch failed"
  checkpointed() { [[ -f $out/checkpoint/state.json ]] || job_done "$job"; }
  wait_for 90 "the first checkpoint of job $job" checkpointed
  [[ $(job_state "$job") == RUNNING ]] || fail "job $job ended before it could be interrupted ($(job_state "$job"))"
  if [[ $how == node-down ]]; then
    info "$name: node-down node2 (job $job)"
    cluster node-down node2 2>/dev/null || fail "node-down failed"
    down2() { [[ $(node_state node2) == down* ]]; }
    wait_for 60 "Slurm to mark node2 down" down2
    requeued() { [[ $(job_field "$job" Restarts) -ge 1 ]]; }
    wait_for 60 "job $job to be requeued after the node failure" requeued
    grep -q 'NODE FAILURE' "$work/$name.out" || fail "the job log does not show Slurm's node failure"
    info "$name: node-up node2"
    cluster node-up node2 2>/dev/null || fail "node-up failed"
    idle2() { [[ $(node_state node2) == idle ]]; }
    wait_for 60 "node2 to return to service" idle2
  else
    info "$name: scontrol requeue $job"
    scontrol requeue "$job" || fail "scontrol requeue $job failed"
    requeued() { [[ $(job_field "$job" Restarts) -ge 1 ]]; }
    wait_for 60 "job $job to be requeued" requeued
  fi
  free_since=''
  wait_for 180 "job $job to run again and finish" pushed "$job"
  [[ $(job_state "$job") == COMPLETED ]] || fail "job $job ended $(job_state "$job")"
  grep -q 'continuing it with --resume' "$work/$name.out" || fail "the requeued job $job did not resume from its checkpoint"
  /usr/bin/python3 - "$out/summary.json" "$work/reference/summary.json" "$name" <<'PY' || fail "$name differs from the uninterrupted run"
import json, sys
got, ref = (json.load(open(p)) for p in sys.argv[1:3])
assert got["status"] == "completed", f"status {got['status']}"
assert got.get("resumed_at"), "summary.json has no resumed_at"
print(f"{sys.argv[3]}: param_checksum {got['param_checksum']!r}, uninterrupted {ref['param_checksum']!r}; resumed_at {got['resumed_at']}")
assert got["param_checksum"] == ref["param_checksum"], "param_checksum differs"
PY
}

run_interrupted node-failure node-down
run_interrupted requeued requeue

# A rank killed on a live node closes its connections: its peers stop at once (well within --timeout),
# exit 1 naming it and its node, and the job script does not requeue that exit.
info "killed-rank: SIGKILL to the rank on node2"
job=$(RUN_NAME=killed-rank sbatch --parsable --job-name=killed-rank --nodes=3 --ntasks-per-node=1 --gres=gpu:1 \
  --cpus-per-task=1 --time=10 --requeue --output="$work/killed-rank.out" "$repo/slurm/train_multinode.sbatch" \
  "${train[@]}") || fail "sbatch failed"
out=$RUNS/killed-rank
checkpointed() { [[ -f $out/checkpoint/state.json ]] || job_done "$job"; }
wait_for 90 "the first checkpoint of job $job" checkpointed
victim=$(ip netns pids "${CLUSTER_NAME}ns1" | while read -r pid; do
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == dtbench ]] && echo "$pid"; done | head -n1)
[[ -n $victim ]] || fail "no dtbench rank found in node2"
killed_at=$SECONDS
kill -KILL "$victim"
state=$(wait_job "$job" 60)
((SECONDS - killed_at < 30)) || fail "the survivors took $((SECONDS - killed_at)) s to stop (their --timeout is 60 s)"
[[ $state == FAILED ]] || fail "job $job ended $state, want FAILED (exit 1 is never requeued)"
[[ $(job_field "$job" Restarts) == 0 ]] || fail "job $job was requeued after a killed rank"
grep -Eq "rank 1 .*node2|node2.*rank 1" "$work/killed-rank.out" || fail "no survivor named rank 1 on node2: $(grep -i rank "$work/killed-rank.out" | head -n 5)"
expect_nothing_left
echo "PASS: node failure and scontrol requeue mid-epoch: requeued, resumed, same checksum, nothing left running"
