# Shared logic of the dtbench Slurm job scripts (sourced, never run). See slurm/README.md.
#
# The job scripts call, in this order:
#   dtbench_job_init                  checks DTBENCH, picks $RUNS, exports MASTER_ADDR/MASTER_PORT
#   dtbench_job_world                 (train_multinode.sbatch) the ranks of this attempt, from the nodes
#                                     Slurm gave it: DTBENCH_JOB_NTASKS, DTBENCH_JOB_TASKS_PER_NODE
#   dtbench_job_run OUT NTASKS ARGS   runs `dtbench train ARGS --out OUT` on NTASKS tasks under srun
#                                     and exits the job script the way docs/design.md defines:
#     - OUT/summary.json says completed:      nothing to do, exit 0 (a finished point is skipped);
#     - OUT/checkpoint/state.json exists:     the run is continued with --resume, at NTASKS ranks even
#       where the checkpoint's world differs (logged): dtbench keeps the global batch, or refuses
#       with exit 2 where it does not divide, and the job then ends FAILED, never requeued;
#     - dtbench exits 75 (it stopped at an agreed step after SIGTERM and wrote a checkpoint):
#       `scontrol requeue $SLURM_JOB_ID`, exit 0; the requeued job starts here again and resumes;
#     - any other non-zero exit is a failure: the script exits with that code.
#
# Environment read here (all optional except DTBENCH):
#   DTBENCH          the dtbench binary (or a wrapper such as `singularity exec ... dtbench`,
#                    given as DTBENCH_LAUNCHER below)
#   DTBENCH_LAUNCHER words put before $DTBENCH in the srun command line, e.g.
#                    "singularity exec --nv $SIF" (default: none)
#   DTBENCH_CONTAINER an Apptainer/Singularity image of dtbench (container/dtbench.def): every rank runs
#                    in it, `apptainer exec --nv [DTBENCH_CONTAINER_ARGS] IMAGE` (singularity where
#                    apptainer is missing), DTBENCH being the image's own binary (/opt/dtbench/bin/dtbench,
#                    or DTBENCH_IN_CONTAINER); DTBENCH_CONTAINER_ARGS e.g. "--bind /scratch --overlay
#                    $SCRATCH/overlay.ext3:ro". Not together with DTBENCH_LAUNCHER.
#   RUNS             where run directories go (default $SCRATCH/dtbench-runs, else
#                    /scratch/$USER/dtbench-runs when /scratch/$USER exists, else ./runs)
#   DTBENCH_THREADS  intra-op threads per rank (default SLURM_CPUS_PER_TASK, else 1); not added
#                    when the arguments already hold --threads
#   DTBENCH_SRUN_MPI srun's --mpi plugin for --backend mpi (default: pmix when
#                    `srun --mpi=list` offers it, else pmi2); the gloo backend needs none
#   DTBENCH_SRUN_ARGS extra words for srun (e.g. "--gpu-bind=closest")
#   DTBENCH_MPI_LAUNCH srun (default) or mpirun: with --backend mpi, start the ranks with Open MPI's
#                    mpirun inside the allocation instead of srun's PMI plugin (preemption's SIGTERM
#                    is then mpirun's to deliver, which kills the ranks: use srun for requeue tests)
#   MASTER_PORT      gloo's rendezvous port (default: derived from the job id and restart count)
#   DTBENCH_TASKS_PER_NODE ranks on each node of a multi-node job submitted without --ntasks and
#                    --ntasks-per-node (a node range, `sbatch --nodes=MIN-MAX`): the job runs this
#                    many times the nodes it got (default: one rank per node). See dtbench_job_world.

dtbench_log() { echo "dtbench-job[${SLURM_JOB_ID:-local}]: $*" >&2; }

dtbench_default_runs() {
  if [[ -n ${SCRATCH:-} ]]; then
    echo "$SCRATCH/dtbench-runs"
  elif [[ -n ${USER:-} && -d /scratch/$USER ]]; then
    echo "/scratch/$USER/dtbench-runs"
  else
    echo "$PWD/runs"
  fi
}

# DTBENCH_CONTAINER: the launcher that enters the image, and the image's dtbench.
dtbench_container() {
  [[ -n ${DTBENCH_CONTAINER:-} ]] || return 0
  if [[ -n ${DTBENCH_LAUNCHER:-} ]]; then
    dtbench_log "error: set DTBENCH_CONTAINER or DTBENCH_LAUNCHER, not both"
    exit 2
  fi
  if [[ ! -e $DTBENCH_CONTAINER ]]; then
    dtbench_log "error: DTBENCH_CONTAINER=$DTBENCH_CONTAINER does not exist (build it: apptainer build dtbench.sif container/dtbench.def)"
    exit 2
  fi
  local runtime
  runtime=$(command -v apptainer || command -v singularity || true)
  if [[ -z $runtime ]]; then
    dtbench_log "error: DTBENCH_CONTAINER is set but neither apptainer nor singularity is on PATH (module load apptainer?)"
    exit 2
  fi
  DTBENCH_LAUNCHER="$runtime exec --nv ${DTBENCH_CONTAINER_ARGS:-} $DTBENCH_CONTAINER"
  local inside=${DTBENCH_IN_CONTAINER:-/opt/dtbench/bin/dtbench}
  [[ -n ${DTBENCH:-} && $DTBENCH != "$inside" ]] && dtbench_log "DTBENCH=$DTBENCH is this machine's; the image's $inside runs"
  DTBENCH=$inside
  export DTBENCH DTBENCH_LAUNCHER
}

dtbench_job_init() {
  dtbench_container
  if [[ -z ${DTBENCH:-} ]]; then
    dtbench_log "error: set DTBENCH to the dtbench binary (export DTBENCH=...; sbatch passes the environment)"
    exit 2
  fi
  if [[ -z ${DTBENCH_LAUNCHER:-} && ! -x $DTBENCH ]]; then
    dtbench_log "error: DTBENCH=$DTBENCH is not an executable file"
    exit 2
  fi
  RUNS=${RUNS:-$(dtbench_default_runs)}
  export RUNS
  mkdir -p "$RUNS"
  if [[ -n ${SLURM_JOB_NODELIST:-} ]]; then
    # Rank 0 runs on the first node of the allocation; gloo's store listens there.
    MASTER_ADDR=${MASTER_ADDR:-$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)}
    export MASTER_ADDR
    # A port of its own per job attempt, so a requeued job never waits on the previous attempt's
    # socket; below Linux's ephemeral range (32768-60999).
    if [[ -z ${MASTER_PORT:-} ]]; then
      MASTER_PORT=$((10000 + (${SLURM_JOB_ID:-0} * 31 + ${SLURM_RESTART_COUNT:-0} * 7919) % 20000))
    fi
    export MASTER_PORT
  fi
  dtbench_log "host $(hostname -s), nodes ${SLURM_JOB_NODELIST:-?}, restart ${SLURM_RESTART_COUNT:-0}, master ${MASTER_ADDR:-?}:${MASTER_PORT:-?}, runs in $RUNS"
}

# The value of `--name V` / `--name=V` in the remaining arguments, if present.
dtbench_arg_value() {
  local name=$1; shift
  while (($#)); do
    case $1 in
      "$name") echo "${2:-}"; return 0 ;;
      "$name"=*) echo "${1#*=}"; return 0 ;;
    esac
    shift
  done
  return 1
}

# The run's outcome as `dtbench status` reads it (completed | failed | interrupted | running | unknown),
# through DTBENCH_LAUNCHER where dtbench runs in it; "" when OUT holds no summary.json, or when dtbench
# cannot read it (its error goes to the job's log).
dtbench_run_status() {
  [[ -f $1/summary.json ]] || return 0
  # shellcheck disable=SC2206  # deliberate word splitting of the launcher's words
  local launcher=(${DTBENCH_LAUNCHER:-})
  "${launcher[@]}" "$DTBENCH" status "$1" || true
}

# dtbench_job_world: the ranks of this attempt of a multi-node job, from what Slurm gave it, into
# DTBENCH_JOB_NTASKS (and DTBENCH_JOB_TASKS_PER_NODE, srun's --ntasks-per-node, when it is ours to set):
#   - DTBENCH_TASKS_PER_NODE=K: K x the job's nodes (SLURM_JOB_NUM_NODES);
#   - else SLURM_NTASKS, Slurm's count for sbatch's --ntasks or --ntasks-per-node;
#   - else one rank per node (sbatch --nodes alone, e.g. --nodes=2-3: Slurm's default of one task a node).
# A job submitted with a node range (--nodes=MIN-MAX) gets as many nodes as are free, at least MIN, and
# a requeued one as many as are free then, so its world is counted here at every start. Give such a job
# neither --ntasks nor --ntasks-per-node: sbatch turns --ntasks-per-node=K into --ntasks=MIN x K, which
# caps the nodes at MIN x K, and Slurm keeps the task count of the first start for the requeued job, so
# that it waits for all its first nodes. Exits 2 on a DTBENCH_TASKS_PER_NODE that is no positive integer.
dtbench_job_world() {
  local nodes=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}
  DTBENCH_JOB_TASKS_PER_NODE=''
  if [[ -n ${DTBENCH_TASKS_PER_NODE:-} ]]; then
    if [[ ! $DTBENCH_TASKS_PER_NODE =~ ^[1-9][0-9]{0,5}$ ]]; then
      dtbench_log "error: DTBENCH_TASKS_PER_NODE must be a positive integer (ranks on each node), not '$DTBENCH_TASKS_PER_NODE'"
      exit 2
    fi
    DTBENCH_JOB_TASKS_PER_NODE=$DTBENCH_TASKS_PER_NODE
    DTBENCH_JOB_NTASKS=$((nodes * DTBENCH_TASKS_PER_NODE))
  elif [[ -n ${SLURM_NTASKS:-} ]]; then
    DTBENCH_JOB_NTASKS=$SLURM_NTASKS
  else
    DTBENCH_JOB_NTASKS=$nodes
  fi
  dtbench_log "world: $DTBENCH_JOB_NTASKS ranks on $nodes node(s) (${SLURM_JOB_NODELIST:-?})"
}

# The world size the run directory's checkpoint was written at: the last segment's in state.json, else
# its ranks; "" when there is none or it cannot be read (python3 missing).
dtbench_checkpoint_world() {
  local state=$1/checkpoint/state.json
  [[ -f $state ]] && command -v python3 >/dev/null || return 0
  python3 - "$state" 2>/dev/null <<'PY' || true
import json, sys
state = json.load(open(sys.argv[1]))
segments = state.get("segments") or []
print(segments[-1]["world_size"] if segments else len(state["ranks"]))
PY
}

# srun's MPI plugin for the mpi backend.
dtbench_srun_mpi() {
  if [[ -n ${DTBENCH_SRUN_MPI:-} ]]; then echo "$DTBENCH_SRUN_MPI"; return; fi
  if srun --mpi=list 2>&1 | grep -qw pmix; then echo pmix; else echo pmi2; fi
}

# dtbench_job_run OUT NTASKS [dtbench train arguments...]; never returns.
dtbench_job_run() {
  local out=$1 ntasks=$2; shift 2
  local args=("$@") status
  status=$(dtbench_run_status "$out")
  if [[ $status == completed ]]; then
    dtbench_log "$out is completed; nothing to do"
    exit 0
  fi
  local resized=''
  if [[ -f $out/checkpoint/state.json ]]; then
    dtbench_log "$out has a checkpoint (status ${status:-none}): continuing it with --resume"
    args+=(--resume)
    local world
    world=$(dtbench_checkpoint_world "$out")
    if [[ -n $world && $world != "$ntasks" ]]; then
      resized="$world -> $ntasks"
      dtbench_log "the checkpoint was written at $world ranks and this attempt has $ntasks: dtbench resumes at $ntasks ranks, keeping the global batch (it refuses, exit 2, where $ntasks ranks do not divide it)"
    fi
  elif [[ -e $out ]]; then
    # A failed or crashed run without a checkpoint cannot be continued; keep it for inspection.
    local aside
    aside=$out.${status:-unknown}-$(date +%Y%m%d-%H%M%S)
    dtbench_log "$out holds a run with status '${status:-none}' and no checkpoint: moved to $aside, starting afresh"
    mv -- "$out" "$aside"
  fi
  mkdir -p "$(dirname "$out")"
  if ! dtbench_arg_value --threads "${args[@]}" >/dev/null; then
    args+=(--threads "${DTBENCH_THREADS:-${SLURM_CPUS_PER_TASK:-1}}")
  fi

  local srun_args=(--ntasks="$ntasks" --kill-on-bad-exit=1)
  [[ -n ${DTBENCH_JOB_TASKS_PER_NODE:-} ]] && srun_args+=(--ntasks-per-node="$DTBENCH_JOB_TASKS_PER_NODE")
  # Slurm 22.05's srun no longer takes --cpus-per-task from the batch environment: pass it on.
  [[ -n ${SLURM_CPUS_PER_TASK:-} ]] && srun_args+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
  if [[ $(dtbench_arg_value --backend "${args[@]}" || true) == mpi ]]; then
    srun_args+=(--mpi="$(dtbench_srun_mpi)")
  fi
  # shellcheck disable=SC2206  # deliberate word splitting of the user's extra words
  [[ -n ${DTBENCH_SRUN_ARGS:-} ]] && srun_args+=(${DTBENCH_SRUN_ARGS})
  # shellcheck disable=SC2206
  local launcher=(${DTBENCH_LAUNCHER:-})

  local step=(srun "${srun_args[@]}")
  if [[ ${DTBENCH_MPI_LAUNCH:-srun} == mpirun ]]; then
    [[ $(dtbench_arg_value --backend "${args[@]}" || true) == mpi ]] ||
      { dtbench_log "error: DTBENCH_MPI_LAUNCH=mpirun needs --backend mpi among the arguments"; exit 2; }
    # Open MPI's mpirun inside the allocation: it reads the nodes and tasks per node from Slurm and
    # starts its daemons with srun. Interfaces: OMPI_MCA_btl_tcp_if_include / oob_tcp_if_include.
    step=(mpirun -np "$ntasks" --bind-to none)
    [[ $(id -u) == 0 ]] && step+=(--allow-run-as-root)
  elif [[ ${DTBENCH_MPI_LAUNCH:-srun} != srun ]]; then
    dtbench_log "error: DTBENCH_MPI_LAUNCH must be srun or mpirun, not '$DTBENCH_MPI_LAUNCH'"
    exit 2
  fi
  dtbench_log "${step[*]} ${launcher[*]} $DTBENCH train ${args[*]} --out $out"
  # srun runs in the background so that this shell can forward a SIGTERM it gets alone
  # (`#SBATCH --signal=B:TERM@120`, `scancel --batch --signal=TERM`) to the job step; bash runs
  # a trap only between commands, and `wait` is such a point. It is forwarded through
  # `scancel --signal=TERM JOBID` (every step, not this batch shell) and never to srun itself:
  # srun answers its own SIGTERM with "forcing job termination" and kills the ranks before they
  # can write their checkpoint.
  local srun_pid rc
  "${step[@]}" "${launcher[@]}" "$DTBENCH" train "${args[@]}" --out "$out" &
  srun_pid=$!
  trap 'dtbench_log "SIGTERM: forwarding it to the job steps"; scancel --signal=TERM "${SLURM_JOB_ID:-0}" 2>/dev/null || kill -TERM '"$srun_pid"' 2>/dev/null || true' TERM
  while true; do
    wait "$srun_pid" && rc=0 || rc=$?
    # wait returns >128 when a trapped signal interrupted it; the step may still be running.
    if ((rc > 128)) && kill -0 "$srun_pid" 2>/dev/null; then continue; fi
    break
  done
  trap - TERM

  if [[ $rc == 75 ]]; then
    if [[ -z ${SLURM_JOB_ID:-} ]]; then
      dtbench_log "dtbench stopped after SIGTERM with a checkpoint (exit 75); not under Slurm, so not requeued"
      exit 75
    fi
    dtbench_log "dtbench stopped after SIGTERM with a checkpoint (exit 75): scontrol requeue $SLURM_JOB_ID"
    if scontrol requeue "$SLURM_JOB_ID"; then
      exit 0
    fi
    dtbench_log "error: scontrol requeue $SLURM_JOB_ID failed; resubmit this job to resume from $out"
    exit 75
  fi
  if [[ $rc == 2 && -n $resized ]]; then
    # Not requeued: another attempt would get the same refusal. The run directory is as it was.
    dtbench_log "error: dtbench refused to resume at $ntasks ranks ($resized; exit 2, the reason above): the job ends here, not requeued; $out and its checkpoint are kept: submit it again on a node count whose ranks divide the global batch, or add --allow-global-batch-change"
    exit 2
  fi
  if [[ $rc != 0 ]]; then
    dtbench_log "error: dtbench failed with exit code $rc (see $out/summary.json and this log)"
    exit "$rc"
  fi
  dtbench_log "$out completed"
  exit 0
}
