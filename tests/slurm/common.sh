# Shared helpers of the live-Slurm tests (sourced). Starts a private one-node Slurm
# (live_slurm.sh) and stops it when the test exits, however it exits.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
info() { echo "[$(date +%T)] $*" >&2; }

[[ $(id -u) == 0 ]] || { echo "FAIL: needs root to run slurmd (CI runs as root)" >&2; exit 1; }
for c in sbatch squeue scontrol scancel slurmctld slurmd munged; do
  command -v "$c" >/dev/null || { echo "FAIL: $c not installed: run scripts/install_deps.sh (Debian: slurm-wlm munge)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/slurm-test.XXXXXX")
cleanup() {
  local rc=$?
  if [[ -n ${LIVE_SLURM_DIR:-} ]]; then
    if [[ $rc != 0 ]]; then
      echo "---- squeue / slurmctld.log tail ----" >&2
      squeue 2>&1 | tail -n 20 >&2 || true
      tail -n 20 "$LIVE_SLURM_DIR/log/slurmctld.log" >&2 2>/dev/null || true
    fi
    "$here/live_slurm.sh" stop "$LIVE_SLURM_DIR" || true
  fi
  if [[ $rc != 0 ]]; then
    for f in "$work"/*.out; do [[ -f $f ]] && { echo "---- $f ----" >&2; tail -n 40 "$f" >&2; }; done
  fi
  rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_slurm() {
  local envs
  envs=$(LIVE_SLURM_STARTER=$$ "$here/live_slurm.sh" start) || fail "the live Slurm did not start"
  eval "$envs"
}

# shellcheck source=job_helpers.sh
source "$here/job_helpers.sh"

# run_status RUNDIR: the run's outcome as `dtbench status` prints it; nothing when it cannot say.
run_status() { "$DTBENCH" status "$1" 2>/dev/null; }
