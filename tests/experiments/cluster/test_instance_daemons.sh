#!/usr/bin/env bash
# How experiments/cluster/cluster.sh's `down` finds an instance's daemons (instance_daemons and
# instance_daemon, from the script sourced: no root, no cluster): a process that has gone between the
# listing of /proc and the reading of its /proc/PID/comm (here a pid that no process has) is passed
# over with nothing on stderr; a process named munged whose command line names the instance's folder
# is found, by itself and in the walk over /proc, and one named munged that does not name it is not.
# Usage: test_instance_daemons.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=${DTBENCH_CLUSTER_SH:-$here/../../../experiments/cluster/cluster.sh}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
dir=$tmp/run/inst1
cp "$(command -v sleep)" "$tmp/munged"
(exec -a "$dir/munged" "$tmp/munged" 60) &
pids+=($!)
(exec -a "$tmp/elsewhere/munged" "$tmp/munged" 60) &
pids+=($!)
ours=${pids[0]} other=${pids[1]}
for _ in $(seq 50); do  # until both have exec'd (their comm is munged)
  [[ $(cat "/proc/$ours/comm" 2>/dev/null) == munged && $(cat "/proc/$other/comm" 2>/dev/null) == munged ]] && break
  sleep 0.1
done
gone=99999999  # above any pid_max (at most 2^22): no process has it

# shellcheck source=../../../experiments/cluster/cluster.sh
result=$(source "$cluster_sh" 2>&1 && set +e &&
  echo "gone: [$(instance_daemon "$gone" "$dir" 2>&1)]" &&
  echo "ours: [$(instance_daemon "$ours" "$dir" 2>&1)]" &&
  echo "other: [$(instance_daemon "$other" "$dir" 2>&1)]" &&
  echo "walk: [$(instance_daemons "$dir" 2>"$tmp/walk.err" | tr '\n' ' ')]")
rc=$?
[[ $rc -eq 0 ]] || fail "sourcing $cluster_sh for its functions failed (exit $rc): $result"
grep -qx 'gone: \[\]' <<<"$result" || fail "a pid that has gone: $(grep '^gone:' <<<"$result") (want nothing, no message)"
grep -qx "ours: \[$ours\]" <<<"$result" || fail "the instance's munged ($ours) not found: $(grep '^ours:' <<<"$result")"
grep -qx 'other: \[\]' <<<"$result" || fail "another folder's munged was taken: $(grep '^other:' <<<"$result")"
grep -qx "walk: \[$ours \]" <<<"$result" || fail "the walk over /proc: $(grep '^walk:' <<<"$result") (want $ours alone)"
[[ ! -s $tmp/walk.err ]] || fail "the walk over /proc wrote to stderr: $(cat "$tmp/walk.err")"
[[ $status -eq 0 ]] && echo "ok: a vanished pid is passed over silently; the instance's daemon found, another's not"
exit $status
