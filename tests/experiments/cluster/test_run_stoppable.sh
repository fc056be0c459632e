#!/usr/bin/env bash
# experiments/cluster/cluster.sh's run_stoppable (from the script sourced: no root, no cluster), which
# up and down run their work under: SIGTERM or SIGINT at any moment of a worker busy with command
# substitutions (where a trap of bash 5.2 itself can fail to run) gives 143 or 130, never a parse
# error, exit 2 or a shell that carries on; the worker dies with its parent, also when the parent is
# killed with SIGKILL; the worker's status comes back (a failure's and a success's).
# Usage: test_run_stoppable.sh [TRIES]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=${DTBENCH_CLUSTER_SH:-$here/../../../experiments/cluster/cluster.sh}
tries=${1:-150}
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# A worker busy with command substitutions (it notes its pid and parent's first), one that fails, one
# that succeeds.
cat >"$tmp/busy.sh" <<'SH'
echo "$$ $PPID ${DTBENCH_CLUSTER_PARENT:-}" >"$1"
while :; do a=$(echo x); b=$(printf '%s' "$a"); done
SH
printf 'false\n' >"$tmp/fails.sh"
printf 'echo done\n' >"$tmp/succeeds.sh"
# A shell that sources cluster.sh and runs a worker under run_stoppable; it prints "rc=N" and exits N.
cat >"$tmp/stoppable.sh" <<'SH'
source "$1"
shift
run_stoppable rc bash "$@"
echo "rc=$rc"
exit "$rc"
SH

# stop SIGNAL WANT: many tries, each signalled at another moment of the busy worker.
stop() {
  local sig=$1 want=$2 i rc bad=0 delay pid
  for ((i = 0; i < tries; i++)); do
    rm -f "$tmp/pids"
    timeout -s KILL 10 bash "$tmp/stoppable.sh" "$cluster_sh" "$tmp/busy.sh" "$tmp/pids" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    # The shell under timeout (not timeout itself), once it exists: on a loaded machine it may take
    # longer to start than the delay, and a signal sent before would reach nobody.
    shell=
    for _ in $(seq 200); do
      shell=$(pgrep -P "$pid" -x bash) && break
      sleep 0.01
    done
    delay=0.0$((i % 9 + 1))
    sleep "$delay"
    [[ -n $shell ]] && kill "-$sig" "$shell" 2>/dev/null
    wait "$pid"
    rc=$?
    # A signal before run_stoppable set its traps (the shell still reading cluster.sh) ends the shell by
    # the signal's default action, with the same status and nothing printed: that is right too.
    if [[ $rc != "$want" ]] || { [[ -e $tmp/pids ]] && ! grep -qx "rc=$want" "$tmp/out"; } || [[ -s $tmp/err ]]; then
      ((bad++ < 3)) && fail "SIG$sig after $delay s: exit $rc (want $want), printed [$(tr '\n' ' ' <"$tmp/out")], stderr [$(tr '\n' ' ' <"$tmp/err")]$( ((rc == 137)) && echo ': it carried on until killed')"
    fi
  done
  ((bad == 0)) && echo "ok: SIG$sig at $tries moments of a busy worker: exit $want each time"
}
stop TERM 143
stop INT 130

# The parent killed with SIGKILL: the worker goes with it.
rm -f "$tmp/pids"
bash "$tmp/stoppable.sh" "$cluster_sh" "$tmp/busy.sh" "$tmp/pids" >/dev/null 2>&1 &
parent=$!
for _ in $(seq 100); do [[ -s $tmp/pids ]] && break; sleep 0.05; done
read -r worker worker_parent told_parent <"$tmp/pids" || fail "the worker never started"
[[ ${worker_parent:-} == "$parent" && ${told_parent:-} == "$parent" ]] ||
  fail "the worker's parent is ${worker_parent:-none} and DTBENCH_CLUSTER_PARENT ${told_parent:-unset}, want $parent for both"
kill -KILL "$parent"
wait "$parent" 2>/dev/null
for _ in $(seq 40); do kill -0 "$worker" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$worker" 2>/dev/null; then
  fail "the worker ($worker) lives on 2 s after its parent was killed with SIGKILL"
else
  echo "ok: a worker dies with its parent killed with SIGKILL"
fi

out=$(bash "$tmp/stoppable.sh" "$cluster_sh" "$tmp/fails.sh" 2>&1)
rc=$?
[[ $rc == 1 && $out == "rc=1" ]] || fail "a worker that fails: exit $rc, printed [$out] (want exit 1, rc=1)"
out=$(bash "$tmp/stoppable.sh" "$cluster_sh" "$tmp/succeeds.sh" 2>&1)
rc=$?
[[ $rc == 0 && $out == $'done\nrc=0' ]] || fail "a worker that succeeds: exit $rc, printed [$out] (want done, rc=0)"
[[ $status -eq 0 ]] && echo "ok: a worker's failure and success come back as its status"
exit $status
