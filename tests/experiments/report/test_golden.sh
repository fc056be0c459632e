#!/usr/bin/env bash
# Golden-file test of dtbench report. tests/experiments/report/fixture/runs holds hand-written run
# directories (a sweep of lenet at batch 32 and 64 on 1 and 2 ranks, a repeat, an extrapolated run,
# and failed, interrupted and mismatched runs); EXPECTED.md there works every table out by hand
# (T(N) per rank, the critical rank, medians of repeats, k, speedups, Table 2's estimate, Table 3's
# byte model and rates, quantiles, stalls, cost, accuracy, job table, the runs left out). The approved
# outputs in fixture/approved/ were checked against EXPECTED.md and are compared byte for byte.
# Usage: report_golden_test.sh DTBENCH FIXTURE_DIR [--approve]   (--approve rewrites approved/)
set -euo pipefail
dtbench=$(realpath "$1") fixture=$(realpath "$2") approve=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$fixture"   # paths in the job table are relative to here

out=$tmp/out
mkdir -p "$out/csv"
"$dtbench" report runs --gpu-hour-price 2.5 --target-accuracy 0.5 --csv-dir "$out/csv" \
  --job-table "$out/jobs_from_flag.csv" > "$out/report.md"
"$dtbench" report runs --gpu-hour-price 2.5 --target-accuracy 0.5 --format csv > "$out/report.csv"
"$dtbench" report runs --gpu-hour-price 2.5 --target-accuracy 0.5 --format json > "$out/report.json"
"$dtbench" report runs --epoch 1 --table time_speedup > "$out/time_speedup_epoch1.md"
"$dtbench" report runs --ceiling ceiling.csv --table bandwidth > "$out/bandwidth_ceiling.md"
"$dtbench" report runs/lenet-b32-n1 runs/lenet-b32-n2 --table time_speedup --format csv > "$out/two_runs.csv"

status=0
fail() { echo "FAIL: $*" >&2; status=1; }
# shellcheck source=approved_outputs.sh
source "$here/approved_outputs.sh"
approve_or_compare "$fixture" "$out" "$approve"
cmp -s "$out/csv/jobs.csv" "$out/jobs_from_flag.csv" || { echo "FAIL: --job-table differs from jobs.csv" >&2; status=1; }

# The same runs on GPUs: GPU-hours, their cost and GPU-seconds as EXPECTED.md works them out (CPU runs
# have none, and are not costed at a GPU-hour price).
cp -r runs "$tmp/gpu-runs"
for config in "$tmp"/gpu-runs/*/config.json; do sed -i 's/"device": "cpu"/"device": "cuda"/' "$config"; done
"$dtbench" report "$tmp/gpu-runs" --gpu-hour-price 2.5 --table cost,jobs --format json > "$tmp/gpu.json"
/usr/bin/python3 - "$tmp/gpu.json" <<'PY' || status=1
import json, sys
tables = {t["name"]: t for t in json.load(open(sys.argv[1]))}
cost = [dict(zip(tables["cost"]["columns"], r)) for r in tables["cost"]["rows"]]
want = {(32, 1): (0.001229167, 0.003072917, 12.003581), (32, 2): (0.000638889, 0.001597222, 6.239149),
        (64, 1): (0.000494444, 0.001236111, 4.828559), (64, 2): (0.000527778, 0.001319444, 5.154080)}
problems = []
for r in cost:
    hours, per_epoch, per_million = want[(r["batch"], r["N"])]
    got = (r["gpu_hours"], r["cost_per_epoch"], r["cost_per_million_images"])
    # JSON keeps 6 decimals of hours and costs, 4 of a ratio
    if any(g is None or abs(g - w) > tol for g, w, tol in zip(got, (hours, per_epoch, per_million), (5e-7, 5e-7, 5e-5))):
        problems.append(f"B={r['batch']} N={r['N']}: gpu_hours, cost {got}, want {(hours, per_epoch, per_million)}")
jobs = {r[0]: dict(zip(tables["jobs"]["columns"], r)) for r in tables["jobs"]["rows"]}
if abs(jobs["lenet-b32-n2"]["gpu_seconds"] - 7.09) > 1e-6 or jobs["lenet-b32-n2"]["device"] != "cuda":
    problems.append(f"the job table's GPU run: {jobs['lenet-b32-n2']}")
if problems:
    sys.exit("FAIL: on GPUs: " + "; ".join(problems))
PY

# Bad input: a clear message and a non-zero exit, never a partial table.
expect_fail() {  # expect_fail CODE PATTERN ARGS...
  local code=$1 pattern=$2; shift 2
  local rc=0 err
  err=$("$dtbench" report "$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne $code ]] || ! grep -qF -- "$pattern" <<<"$err"; then
    echo "FAIL: dtbench report $*: exit $rc, expected $code with '$pattern'; stderr: $err" >&2; status=1
  fi
}
expect_fail 2 "not a directory" runs/no-such-run
expect_fail 2 "no run directory" "$tmp/out/csv"
expect_fail 2 "name at least one run directory"
expect_fail 2 "no table 'bogus'" runs --table bogus
expect_fail 2 "--format must be md, csv or json" runs --format xml
expect_fail 2 "--epoch counts from 1" runs --epoch 0
expect_fail 2 "--target-accuracy is a fraction" runs --target-accuracy 90
printf 'backend,topology\ngloo,ring\n' > "$tmp/bad_ceiling.csv"
expect_fail 1 "has no column 'type'" runs --ceiling "$tmp/bad_ceiling.csv"

# A damaged run is left out with the reason, the others are still reported.
cp -r runs "$tmp/damaged"
head -c 300 runs/lenet-b32-n2/batches.csv > "$tmp/damaged/lenet-b32-n2/batches.csv"
"$dtbench" report "$tmp/damaged" --table excluded --format csv > "$tmp/excluded.csv"
grep -q '^lenet-b32-n2,completed,.*batches.csv line .* (a truncated last line?)' "$tmp/excluded.csv" ||
  { echo "FAIL: a truncated batches.csv is not reported as such:" >&2; cat "$tmp/excluded.csv" >&2; status=1; }

[[ $status -eq 0 ]] && echo "report golden test: all outputs equal the approved ones"
exit $status
