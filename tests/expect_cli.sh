# Sourced by the command-line tests. expect CODE PATTERN ARGS...: runs "$dtbench" ARGS (through
# the array `launcher`, e.g. (timeout 60), when the caller sets one) and checks that it exits with
# CODE and prints something matching the extended regex PATTERN. Counts mismatches in `failures`.
failures=0
launcher=(timeout 120)

expect() {
  local code=$1 pattern=$2
  shift 2
  local output rc
  output=$("${launcher[@]}" "$dtbench" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $code ]] || ! grep -qE -- "$pattern" <<<"$output"; then
    echo "FAIL: dtbench $* -> exit $rc (want $code), output:" >&2
    echo "$output" | head -n 20 >&2
    failures=$((failures + 1))
  else
    echo "ok: dtbench $* -> $rc"
  fi
}
