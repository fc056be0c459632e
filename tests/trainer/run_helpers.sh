# Shell helpers of the tests that watch a dtbench run's directory from outside (source it): the tests'
# common start, rows written so far, waiting for rows or for a process, and one value of a JSON file.

# start_test: a scratch folder `tmp`, the ranks' pids in `pids`, `failures` counted by `fail MESSAGE`,
# `py` (Debian's /usr/bin/python3, with pandas); at exit the test's own children are killed and tmp removed.
start_test() {
  tmp=$(mktemp -d)
  pids=()
  failures=0
  fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
  py() { /usr/bin/python3 "$@"; }
  # Its children, not every pid it started: one it reaped may be another process's by now.
  trap 'pkill -9 -P $$ 2>/dev/null; rm -rf "$tmp"' EXIT
}

# batch_rows DIR: Batch rows in DIR/train_history.log so far (0 before the file exists).
batch_rows() {
  if [[ -f $1/train_history.log ]]; then grep -c ',Batch,' "$1/train_history.log"; else echo 0; fi
}

# wait_rows DIR N SECONDS PID: waits until DIR has N Batch rows; fails after SECONDS or as soon as
# PID (the rank writing DIR) has ended.
wait_rows() {
  local n
  for _ in $(seq 1 $(($3 * 20))); do
    n=$(batch_rows "$1")
    [[ ${n:-0} -ge $2 ]] && return 0
    kill -0 "$4" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# finish PID SECONDS: waits at most SECONDS for PID and sets `rc` to its exit code (SIGKILLs it and
# sets "hung" when it did not end in time). Not for $(...): only this shell can wait for its children.
finish() {
  if ! timeout "$2" tail --pid="$1" -f /dev/null; then
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    rc=hung
    return
  fi
  wait "$1"
  rc=$?
}

# json DIR/FILE KEY: one top-level value of a JSON file ("" when absent or unreadable).
json() {
  py -c 'import json, sys
try:
    value = json.load(open(sys.argv[1])).get(sys.argv[2])
except Exception:
    value = None
print("" if value is None else value)' "$1" "$2"
}
