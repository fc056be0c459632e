#!/usr/bin/env bash
# experiments/cluster/measure_common.sh, the preamble the cluster's four measurement scripts source, without
# root or a cluster: each script's usage line, an unknown flag, a flag without its value, a DTBENCH that is
# not executable and a shell without a cluster each end it with exit 2 and a message naming the script and
# what is wrong; measure_start puts every flag's value in its variable and keeps the defaults of the rest.
# Usage: test_measure_preamble.sh
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
printf '#!/bin/sh\nexit 0\n' >"$tmp/dtbench"
chmod +x "$tmp/dtbench"
: >"$tmp/not-executable"

# expect SCRIPT WANT ARGS...: SCRIPT ARGS exits 2, its stderr names the script and holds WANT.
expect() {
  local script=$1 want=$2 err rc
  shift 2
  err=$(env -u DTBENCH_CLUSTER "$repo/experiments/cluster/$script" "$@" 2>&1 >/dev/null)
  rc=$?
  [[ $rc == 2 && $err == "$script: "*"$want"* ]] || fail "$script $*: exit $rc, '$err' (want exit 2, '$script: ...$want...')"
}
for script in measure_bound.sh measure_capture.sh measure_compression.sh validate_predict.sh; do
  expect "$script" "usage: "
  expect "$script" "usage: " "$tmp/dtbench"
  expect "$script" "unknown option --bogus" "$tmp/dtbench" "$tmp/out" --bogus 1
  expect "$script" "--repeats needs a value" "$tmp/dtbench" "$tmp/out" --repeats
  expect "$script" "$tmp/not-executable is not executable" "$tmp/not-executable" "$tmp/out"
  expect "$script" "no cluster: run eval" "$tmp/dtbench" "$tmp/out"
done
# measure_bound.sh has no --repeats: its unknown flag is the error.
expect measure_bound.sh "unknown option --repeats" "$tmp/dtbench" "$tmp/out" --repeats 2

got=$(bash -c 'source "$1/experiments/cluster/measure_common.sh"; phase=all repeats=5 size=4M
  measure_start "[--phase P] [--repeats N] [--size S]" "--phase=phase --repeats=repeats --size=size" \
    "$2/dtbench" "$2/out" --repeats 3 --phase "train and analyse"
  echo "$dtbench|$out|$phase|$repeats|$size"' _ "$repo" "$tmp" 2>&1)
[[ $got == "$tmp/dtbench|$tmp/out|train and analyse|3|4M" ]] || fail "measure_start's variables: '$got'"
got=$(DTBENCH_CLUSTER="$tmp/cluster.json" bash -c 'source "$1/experiments/cluster/measure_common.sh"
  echo "{\"name\": \"c7\"}" >"$DTBENCH_CLUSTER"; measure_need_cluster; echo "$name"' _ "$repo" 2>&1)
[[ $got == c7 ]] || fail "measure_need_cluster's name: '$got'"
[[ $status == 0 ]] && echo "ok: the four measurement scripts share the preamble"
exit "$status"
