#!/usr/bin/env bash
# slurm/lib/dtbench_job.sh's world of an attempt and its resume at another world, without Slurm: stand-ins
# for srun (records its words, exits with $STUB_SRUN_RC) and scontrol (hostnames; records a requeue) come
# first on PATH. Checked:
#   - dtbench_job_world: one rank per node without a task count (sbatch --nodes=MIN-MAX alone), SLURM_NTASKS
#     when Slurm has one, DTBENCH_TASKS_PER_NODE x the nodes (and srun's --ntasks-per-node) when set; a
#     DTBENCH_TASKS_PER_NODE that is no positive integer: exit 2 naming it;
#   - a checkpoint written at 3 ranks continued on 2 nodes: --resume at --ntasks=2, the change logged;
#     dtbench's refusal (exit 2) ends the job with exit 2 and no requeue, the run directory kept; an exit
#     75 still requeues;
#   - the run's outcome comes from `dtbench status` (the stand-in dtbench hands `status` to the real one): an
#     interrupted run with a checkpoint is continued, a completed one is left alone, without srun.
# Usage: test_job_world.sh REPO DTBENCH
set -uo pipefail
repo=$(realpath "$1")
real_dtbench=$(realpath "${2:?usage: $0 REPO DTBENCH}")
lib=$repo/slurm/lib/dtbench_job.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
stubs=$tmp/stubs
mkdir -p "$stubs"
printf '#!/bin/sh\necho "$*" >>"%s/srun.calls"\nexit "${STUB_SRUN_RC:-0}"\n' "$tmp" >"$stubs/srun"
printf '#!/bin/sh\nif [ "$1 $2" = "show hostnames" ]; then echo node1; echo node3; exit 0; fi\necho "$*" >>"%s/scontrol.calls"\nexit 0\n' \
  "$tmp" >"$stubs/scontrol"
printf '#!/bin/sh\n[ "$1" = status ] && exec "%s" "$@"\nexit 0\n' "$real_dtbench" >"$stubs/dtbench"
chmod +x "$stubs"/*

# world ENV...: DTBENCH_JOB_NTASKS and DTBENCH_JOB_TASKS_PER_NODE after dtbench_job_world, or its exit code.
world() {
  env -i PATH="$stubs:$PATH" "$@" bash -c 'source "$1"; dtbench_job_world 2>/dev/null; echo "$DTBENCH_JOB_NTASKS/$DTBENCH_JOB_TASKS_PER_NODE"' \
    _ "$lib" 2>&1 || echo "exit $?"
}
[[ $(world SLURM_JOB_NUM_NODES=3) == 3/ ]] || fail "3 nodes without a task count: $(world SLURM_JOB_NUM_NODES=3), want 3 ranks"
[[ $(world SLURM_JOB_NUM_NODES=2) == 2/ ]] || fail "2 nodes (a requeue of --nodes=2-3): $(world SLURM_JOB_NUM_NODES=2), want 2 ranks"
[[ $(world SLURM_JOB_NUM_NODES=3 SLURM_NTASKS=6) == 6/ ]] || fail "SLURM_NTASKS=6: $(world SLURM_JOB_NUM_NODES=3 SLURM_NTASKS=6)"
got=$(world SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=6 DTBENCH_TASKS_PER_NODE=4)
[[ $got == 8/4 ]] || fail "DTBENCH_TASKS_PER_NODE=4 on 2 nodes: $got, want 8 ranks, 4 a node"
for bad in 0 -1 two 1.5; do
  got=$(env -i PATH="$stubs:$PATH" SLURM_JOB_NUM_NODES=2 DTBENCH_TASKS_PER_NODE=$bad bash -c 'source "$1"; dtbench_job_world' _ "$lib" 2>&1)
  rc=$?
  [[ $rc == 2 && $got == *"DTBENCH_TASKS_PER_NODE must be a positive integer"*"'$bad'"* ]] ||
    fail "DTBENCH_TASKS_PER_NODE=$bad: exit $rc, '$got', want exit 2 naming it"
done

# A run directory whose checkpoint was written at 3 ranks (state.json as the trainer writes it, cut short).
runs=$tmp/runs
mkdir -p "$runs/r/checkpoint"
cat >"$runs/r/checkpoint/state.json" <<'EOF'
{"epoch": 1, "global_step": 10, "ranks": [{}, {}, {}],
 "segments": [{"first_global_step": 1, "world_size": 3, "ranks_per_node": 1, "batch_size": 32, "global_batch_size": 96, "lr": 0.1}]}
EOF
printf '{"status": "interrupted"}\n' >"$runs/r/summary.json"
# job RC ENV...: the job script's end (train_multinode.sbatch's last two lines) with srun exiting RC.
job() {
  local rc=$1; shift
  rm -f "$tmp/srun.calls" "$tmp/scontrol.calls"
  env -i PATH="$stubs:$PATH" HOME="$tmp" STUB_SRUN_RC="$rc" DTBENCH="$stubs/dtbench" RUNS="$runs" SLURM_JOB_ID=7 \
    SLURM_JOB_NODELIST='node[1,3]' "$@" bash -c 'source "$1"; dtbench_job_init; dtbench_job_world
      dtbench_job_run "$RUNS/r" "$DTBENCH_JOB_NTASKS" --model lenet --device cpu' _ "$lib" >"$tmp/job.log" 2>&1
}
job 2 SLURM_JOB_NUM_NODES=2
rc=$?
[[ $rc == 2 ]] || fail "dtbench's refusal at 2 ranks: the job script exited $rc, want 2: $(cat "$tmp/job.log")"
grep -q -- '^--ntasks=2 .*dtbench train --model lenet --device cpu .*--resume .*--out' "$tmp/srun.calls" 2>/dev/null ||
  fail "srun was not run at --ntasks=2 with --resume: $(cat "$tmp/srun.calls" 2>/dev/null)"
grep -q 'checkpoint was written at 3 ranks and this attempt has 2' "$tmp/job.log" ||
  fail "the world change is not logged: $(cat "$tmp/job.log")"
grep -q 'has a checkpoint (status interrupted): continuing it with --resume' "$tmp/job.log" ||
  fail "the run's outcome (dtbench status) is not the job's: $(cat "$tmp/job.log")"
grep -q 'refused to resume at 2 ranks (3 -> 2; exit 2.*not requeued' "$tmp/job.log" ||
  fail "the refusal's end is not explained: $(cat "$tmp/job.log")"
[[ ! -e $tmp/scontrol.calls ]] || fail "a refused resume called scontrol $(cat "$tmp/scontrol.calls")"
[[ -f $runs/r/checkpoint/state.json ]] || fail "the refused run's checkpoint is gone"

job 0 SLURM_JOB_NUM_NODES=2
rc=$?
[[ $rc == 0 ]] || fail "a resume at 2 ranks that completes: exit $rc: $(cat "$tmp/job.log")"
job 75 SLURM_JOB_NUM_NODES=1 DTBENCH_TASKS_PER_NODE=2
rc=$?
[[ $rc == 0 ]] || fail "exit 75 (stopped with a checkpoint): the job script exited $rc, want 0 after its requeue"
grep -q '^requeue 7$' "$tmp/scontrol.calls" 2>/dev/null || fail "exit 75 was not requeued: $(cat "$tmp/job.log")"
grep -q -- '--ntasks=2 --kill-on-bad-exit=1 --ntasks-per-node=2 ' "$tmp/srun.calls" 2>/dev/null ||
  fail "DTBENCH_TASKS_PER_NODE=2 on 1 node: srun got $(cat "$tmp/srun.calls" 2>/dev/null)"
grep -q 'checkpoint was written at 3 ranks and this attempt has 2' "$tmp/job.log" ||
  fail "the world change is not logged with DTBENCH_TASKS_PER_NODE: $(cat "$tmp/job.log")"
job 0 SLURM_JOB_NUM_NODES=3
grep -q 'checkpoint was written at' "$tmp/job.log" && fail "a resume at the checkpoint's own world logged a change"

printf '{"status": "completed"}\n' >"$runs/r/summary.json"
job 2 SLURM_JOB_NUM_NODES=2
rc=$?
[[ $rc == 0 ]] && grep -q 'is completed; nothing to do' "$tmp/job.log" && [[ ! -e $tmp/srun.calls ]] ||
  fail "a completed run (dtbench status): exit $rc, srun $(cat "$tmp/srun.calls" 2>/dev/null), log $(cat "$tmp/job.log")"

((status == 0)) && echo "PASS: the job's world from its nodes; a resume at another world logged, its refusal not requeued"
exit "$status"
