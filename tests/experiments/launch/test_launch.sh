#!/usr/bin/env bash
# dtbench launch: variables and prefixed output, failure propagation (a rank exits 3 -> launch
# exits 3 and the siblings are stopped), a rank's SIGKILL that launch did not send named as such,
# SIGKILL after the grace period for a sibling that ignores SIGTERM. Usage: launch_test.sh path/to/dtbench
set -uo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

out=$(timeout 60 "$dtbench" launch -n 3 --ranks-per-host 2 -- \
        sh -c 'echo "rank=$RANK world=$WORLD_SIZE local=$LOCAL_RANK addr=$MASTER_ADDR k=$DTBENCH_RANKS_PER_HOST port=$MASTER_PORT"' 2>&1)
rc=$?
[[ $rc -eq 0 ]] || fail "variables run exited $rc"
grep -qE '^\[0\] rank=0 world=3 local=0 addr=127.0.0.1 k=2 port=[0-9]+$' <<<"$out" || fail "rank 0 line: $out"
grep -qE '^\[2\] rank=2 world=3 local=0 ' <<<"$out" || fail "rank 2 line: $out"
grep -qE '^\[1\] rank=1 world=3 local=1 ' <<<"$out" || fail "rank 1 line: $out"

start=$(date +%s)
timeout 60 "$dtbench" launch -n 3 --grace 2 -- \
  sh -c 'echo $$ > '"$tmp"'/pid.$RANK; if [ "$RANK" = 1 ]; then sleep 1; exit 3; fi; exec sleep 50' >"$tmp/fail.log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
[[ $rc -eq 3 ]] || fail "a rank exiting 3 made launch exit $rc (want 3)"
[[ $elapsed -lt 20 ]] || fail "launch took ${elapsed}s to stop the siblings"
grep -q 'rank 1 exited with code 3' "$tmp/fail.log" || fail "no message naming rank 1: $(cat "$tmp/fail.log")"
for r in 0 2; do
  pid=$(cat "$tmp/pid.$r" 2>/dev/null)
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then fail "rank $r (pid $pid) still runs"; kill -9 "$pid"; fi
done

# A rank ended by a SIGKILL that launch did not send (the kernel's out-of-memory killer's signal) is named
# as such, never as a plain exit code.
timeout 60 "$dtbench" launch -n 2 --grace 2 -- sh -c 'if [ "$RANK" = 1 ]; then kill -KILL $$; fi; sleep 30' \
  >"$tmp/sigkill.log" 2>&1
rc=$?
[[ $rc -eq 137 ]] || fail "a rank killed by SIGKILL made launch exit $rc (want 137)"
grep -q 'rank 1 was killed by SIGKILL (not sent by dtbench launch' "$tmp/sigkill.log" ||
  fail "the SIGKILL is not named as one launch did not send: $(cat "$tmp/sigkill.log")"

start=$(date +%s)
timeout 60 "$dtbench" launch -n 2 --grace 2 -- \
  sh -c 'if [ "$RANK" = 0 ]; then sleep 1; exit 5; fi; trap "" TERM; sleep 40' >"$tmp/kill.log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
[[ $rc -eq 5 ]] || fail "a rank exiting 5 made launch exit $rc (want 5)"
[[ $elapsed -ge 3 && $elapsed -lt 15 ]] || fail "a sibling ignoring SIGTERM was not killed after the grace (${elapsed}s)"

# SIGTERM to the launcher reaches every rank.
"$dtbench" launch -n 2 -- sh -c 'trap "echo got > '"$tmp"'/term.\$RANK; exit 7" TERM; echo ready; sleep 30 & wait' \
  >"$tmp/term.log" 2>&1 &
launcher=$!
for _ in $(seq 1 100); do [[ $(grep -c ready "$tmp/term.log") -eq 2 ]] && break; sleep 0.1; done
kill -TERM "$launcher"
timeout 20 tail --pid="$launcher" -f /dev/null
wait "$launcher"
rc=$?
[[ $rc -eq 7 ]] || fail "SIGTERM to launch: exit $rc (want the ranks' 7): $(cat "$tmp/term.log")"
[[ -f $tmp/term.0 && -f $tmp/term.1 ]] || fail "SIGTERM was not forwarded to both ranks"
grep -q 'forwarding' "$tmp/term.log" || fail "no forwarding message"

# Exit 75 (a rank interrupted at an agreed step) does not stop its siblings: they finish their own stop.
timeout 60 "$dtbench" launch -n 2 --grace 1 -- \
  sh -c 'if [ "$RANK" = 0 ]; then exit 75; fi; sleep 3; touch '"$tmp"'/late.$RANK; exit 75' >"$tmp/tempfail.log" 2>&1
rc=$?
[[ $rc -eq 75 ]] || fail "ranks exiting 75 made launch exit $rc (want 75): $(cat "$tmp/tempfail.log")"
[[ -f $tmp/late.1 ]] || fail "a rank's exit 75 stopped its sibling before it finished"

# A second signal to the launcher kills ranks that are still stopping.
"$dtbench" launch -n 2 -- sh -c 'trap "" TERM; echo ready; sleep 30 & wait' >"$tmp/twice.log" 2>&1 &
launcher=$!
for _ in $(seq 1 100); do [[ $(grep -c ready "$tmp/twice.log") -eq 2 ]] && break; sleep 0.1; done
kill -TERM "$launcher"
sleep 1
kill -0 "$launcher" 2>/dev/null || fail "the launcher ended after one SIGTERM although its ranks ignore it"
kill -TERM "$launcher"
timeout 20 tail --pid="$launcher" -f /dev/null
wait "$launcher"
rc=$?
[[ $rc -eq 137 ]] || fail "a second SIGTERM made launch exit $rc (want 137: ranks killed): $(cat "$tmp/twice.log")"

timeout 30 "$dtbench" launch -n 2 -- /nonexistent/command >"$tmp/missing.log" 2>&1
rc=$?
[[ $rc -eq 127 ]] || fail "a missing command made launch exit $rc (want 127)"
grep -q 'cannot run' "$tmp/missing.log" || fail "no 'cannot run' message"

timeout 30 "$dtbench" launch -- true >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "launch without -n is not a usage error"

[[ $failures -eq 0 ]] && echo "ok: launch" || exit 1
