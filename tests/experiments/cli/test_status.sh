#!/usr/bin/env bash
# `dtbench status RUNDIR`, the one reader of a run's outcome that scripts ask (run/run_summary.h,
# readRunOutcome): every outcome's name from the report's fixture runs and from summary.json files written
# here, `unknown` for a run without summary.json, --json with the outcome's facts (run/run_outcome.h's
# rows), exit 2 for a path that holds no run, exit 1 for a summary.json that cannot say.
# Usage: test_status.sh DTBENCH
set -uo pipefail
dtbench=$(realpath "$1")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
fixture=$repo/tests/experiments/report/fixture/runs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# expect RC OUT_PATTERN ARGS...: dtbench status ARGS exits RC with stdout+stderr matching OUT_PATTERN.
expect() {
  local want=$1 pattern=$2 got rc
  shift 2
  got=$("$dtbench" status "$@" 2>&1)
  rc=$?
  [[ $rc == "$want" && $got =~ $pattern ]] || fail "dtbench status $*: exit $rc, '$got' (want exit $want, /$pattern/)"
}

expect 0 '^completed$' "$fixture/lenet-b64-n1"
expect 0 '^interrupted$' "$fixture/lenet-b32-n2-interrupted"
expect 0 '^failed$' "$fixture/lenet-b64-n2-failed"
expect 0 '^\{"complete":true,"continuable":false,"ended":true,"exit_code":0,"status":"completed"\}$' \
  --json "$fixture/lenet-b64-n1"
expect 0 '^\{"complete":false,"continuable":true,"ended":true,"exit_code":75,"status":"interrupted"\}$' \
  "$fixture/lenet-b32-n2-interrupted" --json
expect 0 '"exit_code":1,"status":"failed"' --json "$fixture/lenet-b64-n2-failed"

mkdir -p "$tmp/running" "$tmp/started" "$tmp/bad-status" "$tmp/bad-json" "$tmp/no-status" "$tmp/empty"
printf '{"status": "running", "model": "lenet"}\n' >"$tmp/running/summary.json"
expect 0 '^running$' "$tmp/running"
expect 0 '"complete":false,"continuable":false,"ended":false,"exit_code":null,"status":"running"' --json "$tmp/running"
# A run killed before its first summary.json: config.json alone.
cp "$fixture/lenet-b64-n1/config.json" "$tmp/started/"
expect 0 '^unknown$' "$tmp/started"
expect 0 '^\{"complete":false,"continuable":false,"ended":null,"exit_code":null,"status":"unknown"\}$' --json "$tmp/started"
printf '{"model": "lenet"}\n' >"$tmp/no-status/summary.json"
expect 0 '^unknown$' "$tmp/no-status"
printf '{"status": "finished"}\n' >"$tmp/bad-status/summary.json"
expect 1 'bad-status: summary.json: status takes one of running, completed, interrupted, failed' "$tmp/bad-status"
printf '{"status": ' >"$tmp/bad-json/summary.json"
expect 1 'summary.json is not valid JSON' "$tmp/bad-json"

expect 2 'empty is not a run directory \(it has neither config.json nor summary.json\); see dtbench status --help' \
  "$tmp/empty"
expect 2 'missing is not a directory' "$tmp/missing"
expect 2 'missing is not a directory' "$tmp/running/summary.json/missing"
expect 2 'name the run directory'
expect 2 'one run directory at a time, got 2' "$tmp/running" "$tmp/started"
expect 2 "bogus.*; see dtbench status --help" --bogus "$tmp/running"
expect 0 'Synopsis: dtbench status \[--json\] RUNDIR' --help
"$dtbench" --help | grep -q '^ *status ' || fail "dtbench --help does not list status"
[[ $status == 0 ]] && echo "ok: dtbench status reads every outcome, its facts and its errors"
exit "$status"
