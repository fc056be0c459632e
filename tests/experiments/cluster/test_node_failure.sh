#!/bin/bash
# Faults across nodes. A 3-node gloo job of slurm/train_multinode.sbatch with --requeue and
# --checkpoint-every loses node2 mid-epoch (`cluster.sh node-down`: its link goes down, then its slurmd
# and every process in it are killed, so no connection closes). Slurm marks node2 DOWN after
# SlurmdTimeout, stops the survivors and requeues the job; after `node-up node2` the job resumes from
# its last checkpoint and completes with the same param_checksum as the run uninterrupted. Then the
# same with `scontrol requeue` mid-epoch. A rank killed on a live node instead stops its peers at once
# (exit 1, naming it and its node; not requeued). Then a job submitted with a node range (--nodes=2-3,
# --sample-ledger) starts on 3 nodes and loses node2 for good mid-epoch: Slurm requeues it, it starts
# again on the 2 nodes left and resumes at world 2 from its last checkpoint with the global batch kept,
# completes, its config.json's segments are world 3 then 2, and `dtbench audit` finds every sample of
# every epoch trained once. Nothing is left running on any node afterwards.
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

down2() { [[ $(node_state node2) == down* ]]; }
requeued() { [[ $(job_field "$job" Restarts) -ge 1 ]]; }

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

# A node range: the job continues on what the cluster has (slurm/README.md, "Node ranges"). No task count
# (one rank a node), so Slurm gives it as many of nodes 2-3 as are free, at every start.
name=node-range
out=$RUNS/$name
info "$name: --nodes=2-3 with --sample-ledger; node2 goes down and stays down"
job=$(RUN_NAME=$name sbatch --parsable --job-name="$name" --nodes=2-3 --gres=gpu:1 --cpus-per-task=1 --time=10 \
  --requeue --output="$work/$name.out" "$repo/slurm/train_multinode.sbatch" "${train[@]}" --sample-ledger) ||
  fail "sbatch --nodes=2-3 failed"
checkpointed() { [[ -f $out/checkpoint/state.json ]] || job_done "$job"; }
wait_for 90 "the first checkpoint of job $job" checkpointed
[[ $(job_state "$job") == RUNNING ]] || fail "job $job ended before it could be interrupted ($(job_state "$job"))"
[[ $(job_field "$job" NumNodes) == 3 ]] || fail "job $job started on $(job_field "$job" NodeList), want the 3 free nodes"
info "$name: node-down node2 (job $job)"
cluster node-down node2 2>/dev/null || fail "node-down failed"
wait_for 60 "Slurm to mark node2 down" down2
wait_for 60 "job $job to be requeued after the node failure" requeued
free_since=''
wait_for 180 "job $job to run again on 2 nodes and finish" pushed "$job"
[[ $(job_state "$job") == COMPLETED ]] || fail "job $job ended $(job_state "$job") on $(job_field "$job" NodeList)"
[[ $(job_field "$job" NumNodes) == 2 && $(node_state node2) == down* ]] ||
  fail "job $job's last start ran on $(job_field "$job" NodeList) with node2 $(node_state node2), want the 2 live nodes"
grep -q 'NODE FAILURE' "$work/$name.out" || fail "the job log does not show Slurm's node failure"
grep -q 'world: 2 ranks on 2 node(s)' "$work/$name.out" || fail "the requeued job did not count 2 ranks on its 2 nodes"
grep -q 'checkpoint was written at 3 ranks and this attempt has 2' "$work/$name.out" ||
  fail "the requeued job did not log the world change: $(grep dtbench-job "$work/$name.out" | tail -n 5)"
/usr/bin/python3 - "$out" <<'PY' || fail "$name: its records do not show a run of world 3, then 2"
import json, sys
out = sys.argv[1]
summary = json.load(open(out + "/summary.json"))
config = json.load(open(out + "/config.json"))
assert summary["status"] == "completed", f"status {summary['status']}"
assert summary.get("resumed_at"), "summary.json has no resumed_at"
worlds = [s["world_size"] for s in config.get("segments", [])]
batches = [(s["batch_size"], s["global_batch_size"]) for s in config.get("segments", [])]
print(f"node-range: segments {config.get('segments')}")
assert worlds == [3, 2], f"segments' worlds {worlds}, want [3, 2]"
assert batches == [(32, 96), (48, 96)], f"segments' batches {batches}, want 32 x 3 then 48 x 2 (global 96 kept)"
assert config["segments"][1]["first_global_step"] > 1, "the second segment starts at step 1"
PY
"$DTBENCH" audit "$out" >"$work/audit.out" 2>&1 || { cat "$work/audit.out" >&2; fail "dtbench audit $out failed"; }
info "$name: $(tail -n 1 "$work/audit.out")"
expect_nothing_left
echo "PASS: node failure and scontrol requeue mid-epoch: requeued, resumed, same checksum; a node range continued on 2 nodes, audited; nothing left running"
