# Shared helpers of the emulated-cluster tests (sourced): a cluster of their own
# (experiments/cluster/cluster.sh, named after this test's pid, on a subnet of its own), taken down
# when the test exits, however it exits.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cluster_sh=$repo/experiments/cluster/cluster.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
info() { echo "[$(date +%T)] $*" >&2; }

[[ $(id -u) == 0 ]] || fail "needs root (namespaces, tc, slurmd); CI runs as root"
for c in sbatch squeue scontrol slurmctld slurmd munged nsenter unshare tc nft ip; do
  command -v "$c" >/dev/null || fail "$c not installed: run scripts/install_deps.sh"
done

CLUSTER_NAME=${CLUSTER_NAME:-t$(($$ % 10000000))}
CLUSTER_SUBNET=${CLUSTER_SUBNET:-10.79.$(($$ % 250))}
work=$(mktemp -d "${TMPDIR:-/tmp}/cluster-test.XXXXXX")
cluster() { "$cluster_sh" --name "$CLUSTER_NAME" "$@"; }
cleanup() {
  local rc=$?
  if [[ $rc != 0 && -d /run/dtbench-cluster/$CLUSTER_NAME ]]; then
    echo "---- cluster status, squeue, slurmctld.log tail ----" >&2
    cluster status >&2 2>&1 || true
    squeue 2>&1 | tail -n 20 >&2 || true
    tail -n 20 "/run/dtbench-cluster/$CLUSTER_NAME/log/slurmctld.log" >&2 2>/dev/null || true
    for f in "$work"/*.out; do [[ -f $f ]] && { echo "---- $f ----" >&2; tail -n 30 "$f" >&2; }; done
  fi
  cluster down >/dev/null 2>&1 || true
  rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# cluster_up ARGS...: `up` with this test's subnet; exports SLURM_CONF, DTBENCH_CLUSTER, OMPI_MCA_*.
cluster_up() {
  cluster --subnet "$CLUSTER_SUBNET" up "$@" >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; fail "cluster up $* failed"; }
  eval "$(cluster env)"
}

# job_state, job_field, wait_for
# shellcheck source=../../slurm/job_helpers.sh
source "$repo/tests/slurm/job_helpers.sh"
node_state() { sinfo -h -N -n "$1" -o '%T' 2>/dev/null | head -n1; }

# wait_job JOB SECONDS: until the job ends; prints its final state.
job_done() { case $(job_state "$1") in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) return 0 ;; *) return 1 ;; esac; }
wait_job() { wait_for "$2" "job $1 to end" job_done "$1"; job_state "$1"; }

# Processes left in any node of the cluster other than its slurmd.
leftover_processes() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^${CLUSTER_NAME}ns[0-9]+\$"); do
    for pid in $(ip netns pids "$ns"); do
      [[ $(cat "/proc/$pid/comm" 2>/dev/null) == slurmd ]] && continue
      echo "$ns:$pid:$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-80)"
    done
  done
}

# Fails unless, within 30 s (slurmstepd may still be finishing a step that ended), no process but
# slurmd runs in any node.
expect_nothing_left() {
  local deadline=$((SECONDS + 30)) left
  while left=$(leftover_processes) && [[ -n $left ]]; do
    ((SECONDS < deadline)) || fail "processes left on the nodes: $left"
    sleep 0.5
  done
}
