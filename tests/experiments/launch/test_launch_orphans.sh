#!/usr/bin/env bash
# dtbench launch leaves no rank behind: a launcher killed with SIGKILL takes its ranks with it, and a
# launch that cannot start all its ranks (too few file descriptors) kills the ones it started before
# it reports the error. Every rank is `sleep` running under a name unique to this test run, so that
# only this test's processes are counted (and killed, by pid, if one is left).
# Usage: test_launch_orphans.sh path/to/dtbench
set -uo pipefail
dtbench=$1
marker="dtbench-orphan-test-$$-$RANDOM"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ranks() { pgrep -f "^$marker " | tr '\n' ' '; }
stop_left() {
  local left
  left=$(ranks)
  [[ -z $left ]] || kill -9 $left 2>/dev/null
}
trap stop_left EXIT
rank=(bash -c 'exec -a "$0" sleep 300' "$marker")

# kill -9 of the launcher while its ranks run.
"$dtbench" launch -n 2 -- "${rank[@]}" >/dev/null 2>&1 &
launcher=$!
for _ in $(seq 1 100); do [[ $(ranks | wc -w) -eq 2 ]] && break; sleep 0.1; done
[[ $(ranks | wc -w) -eq 2 ]] || fail "the 2 ranks did not start: '$(ranks)'"
kill -9 "$launcher"
wait "$launcher" 2>/dev/null
for _ in $(seq 1 50); do [[ -z $(ranks) ]] && break; sleep 0.1; done
[[ -z $(ranks) ]] || fail "ranks still running 5 s after kill -9 of their launcher: pids $(ranks)"
stop_left

# A launch that runs out of file descriptors part way (each rank holds two pipes): the error names
# the rank it could not start, and the ranks started before it are gone when launch has returned.
output=$(ulimit -n 16 && "$dtbench" launch -n 16 -- "${rank[@]}" 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "a launch without enough file descriptors exited $rc (want 1): $output"
grep -qE "cannot start rank [1-9][0-9]* of 16 \(pipe: Too many open files\); the [1-9][0-9]* rank\(s\) already started were killed" <<<"$output" ||
  fail "no message naming the rank that could not start and the ranks killed: $output"
[[ -z $(ranks) ]] || fail "ranks left running after a failed start: pids $(ranks)"

[[ $failures -eq 0 ]] && echo "ok: no orphaned ranks" || exit 1
