# Helpers for tests that watch Slurm jobs (sourced by tests/slurm/common.sh and
# tests/experiments/cluster/common.sh; the caller defines fail MESSAGE).

# Job state (PENDING, RUNNING, COMPLETED, FAILED, ...) of one job id, from scontrol (no accounting).
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n1 | cut -d= -f2; }
job_field() { scontrol -o show job "$1" 2>/dev/null | grep -o " $2=[^ ]*" | head -n1 | cut -d= -f2; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s until it succeeds.
wait_for() {
  local limit=$1 what=$2 deadline; shift 2
  deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || fail "timed out after ${limit} s waiting for $what"
    sleep 0.5
  done
}
