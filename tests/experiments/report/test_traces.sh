#!/usr/bin/env bash
# Golden-file test of dtbench report's job-trace tables (docs/report.md, "Job traces").
# trace_fixture/traces holds a hand-written Helios-layout trace of 13 jobs (helios.csv), a sacct file
# of 9 rows (sacct.txt: a requeued job, a cancelled one, a 2-node GPU job, typed GPUs, an array task, a
# job without GPUs, a pending and a running one) and a Philly-like trace read through --trace-columns;
# trace_fixture/runs three runs of the golden fixture with config.json's slurm_job_id (1001, 1002,
# null). trace_fixture/EXPECTED.md works every CDF point, share and join column out by hand; the
# approved outputs in trace_fixture/approved/ were checked against it and are compared byte for byte.
# Also: the run tables are unchanged by --trace and without --sacct, and malformed or truncated files
# fail naming the file and the line.
# Usage: test_traces.sh DTBENCH TRACE_FIXTURE_DIR [--approve]   (--approve rewrites approved/)
set -euo pipefail
dtbench=$(realpath "$1") fixture=$(realpath "$2") approve=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$fixture"
export TZ=UTC  # the traces' local times are UTC

philly=(--trace traces/philly_like.csv --trace-columns
        job_id=jobid,state=status,submit_time=submitted_time,start_time=started_time,end_time=finished_time,gpu_num=num_gpus,duration=run_time_s)
out=$tmp/out
mkdir -p "$out/csv"
"$dtbench" report --sacct traces/sacct.txt --trace traces/helios.csv > "$out/traces.md"
"$dtbench" report --sacct traces/sacct.txt --trace traces/helios.csv --format csv > "$out/traces.csv"
"$dtbench" report --trace traces/helios.csv --table job_duration_cdf --format csv > "$out/job_duration_cdf.csv"
"$dtbench" report "${philly[@]}" --table trace_jobs,final_states --format csv > "$out/philly.csv"
"$dtbench" report runs --sacct traces/sacct.txt --table cost,jobs --format csv > "$out/join.csv"
"$dtbench" report runs --sacct traces/sacct.txt --table cost,jobs > "$out/join.md"
"$dtbench" report runs --sacct traces/sacct.txt --trace traces/helios.csv --csv-dir "$out/csv" > /dev/null
find "$out/csv" -type f ! -name 'trace_*' ! -name 'job_duration_cdf.csv' ! -name 'queue_delay_cdf.csv' \
  ! -name 'final_states.csv' ! -name 'gpu_time_by_size.csv' ! -name 'jobs.csv' ! -name 'cost.csv' -delete

status=0
fail() { echo "FAIL: $*" >&2; status=1; }
# shellcheck source=approved_outputs.sh
source "$here/approved_outputs.sh"
approve_or_compare "$fixture" "$out" "$approve"

# JSON has the same tables.
tables=trace_jobs,job_duration_cdf,queue_delay_cdf,final_states,gpu_time_by_size,trace_skipped
"$dtbench" report --sacct traces/sacct.txt --trace traces/helios.csv --format json > "$tmp/traces.json"
/usr/bin/python3 -c 'import json, sys
names = [t["name"] for t in json.load(open(sys.argv[1]))]
assert names == sys.argv[2].split(","), names' "$tmp/traces.json" "$tables" || fail "--format json lacks the trace tables"

# The run tables: --trace adds tables after them and changes none; without --sacct the job and cost
# tables have no join columns; the job-trace tables do not exist without a trace.
"$dtbench" report runs --format csv > "$tmp/runs.csv"
"$dtbench" report runs --trace traces/helios.csv --format csv > "$tmp/runs_trace.csv"
cmp -s "$tmp/runs.csv" <(head -c "$(stat -c %s "$tmp/runs.csv")" "$tmp/runs_trace.csv") ||
  fail "--trace changes the run tables"
grep -q slurm_job_id "$tmp/runs_trace.csv" && fail "the job table has the join's columns without --sacct"
rc=0
err=$("$dtbench" report runs --table trace_jobs 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 2 ]] && grep -qF "no table 'trace_jobs'" <<<"$err" || fail "runs without traces have trace tables: $err"

# Malformed files: exit 1 naming the file and the line, no table printed.
expect_error() {  # expect_error NAME MESSAGE FILE_OPTION FILE [ARGS...]
  local name=$1 message=$2 rc=0 err
  shift 2
  err=$("$dtbench" report "$@" 2>&1 >"$tmp/stdout") || rc=$?
  if [[ $rc -ne 1 ]] || ! grep -qF -- "$message" <<<"$err" || [[ -s "$tmp/stdout" ]]; then
    fail "$name: exit $rc, expected 1 with '$message' and nothing printed; stderr: $err"
  fi
}
bad=$tmp/bad
mkdir -p "$bad"
head -c -60 traces/sacct.txt > "$bad/truncated.txt"
expect_error truncated "$bad/truncated.txt line 10: has 7 fields, sacct's header has 12 (the last line has no newline: the file is truncated)" \
  --sacct "$bad/truncated.txt"
sed '4s/|2026-11-20T09:05:00|2026-11-20T09:25:00|/|2026-11-20T09:05:00|2026-11-20 9:25|/' traces/sacct.txt > "$bad/time.txt"
expect_error time "$bad/time.txt line 4: column 'End': '2026-11-20 9:25' is not a time (YYYY-MM-DDTHH:MM:SS)" \
  --sacct "$bad/time.txt"
sed '5s/|0:15|/|0:15|x|/' traces/sacct.txt > "$bad/fields.txt"
expect_error fields "$bad/fields.txt line 5: has 13 fields, sacct's header has 12" --sacct "$bad/fields.txt"
sed '2s#gres/gpu=2#gres/gpu=-2#' traces/sacct.txt > "$bad/negative.txt"
expect_error negative "$bad/negative.txt line 2: column 'AllocTRES': negative GPUs in 'gres/gpu=-2'" --sacct "$bad/negative.txt"
sed '1s/AllocTRES/ReqTRES/' traces/sacct.txt > "$bad/header.txt"
expect_error header "$bad/header.txt line 1: the header is 'JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|ReqTRES', not sacct --parsable2's" \
  --sacct "$bad/header.txt"
sed '4s/|2026-11-20T09:05:00|2026-11-20T09:25:00|/|2026-11-20T09:05:00|2026-11-20T09:00:00|/' traces/sacct.txt > "$bad/backwards.txt"
expect_error backwards "$bad/backwards.txt line 4: column 'End': '2026-11-20T09:00:00' is before Start '2026-11-20T09:05:00': a negative run time" \
  --sacct "$bad/backwards.txt"
{ printf 'Job\x01\x02|\xff\xfe|'; head -c 2000 /dev/zero | tr '\0' 'A'; printf '\n'; tail -n +2 traces/sacct.txt; } > "$bad/binary.txt"
expect_error binary "$bad/binary.txt line 1: the header is 'Job\x01\x02|\xFF\xFE|AAAA" --sacct "$bad/binary.txt"
err=$("$dtbench" report --sacct "$bad/binary.txt" 2>&1 >/dev/null) || true
(( ${#err} < 700 )) || fail "a binary header is echoed whole (${#err} bytes)"
{ printf 'id\x01\x02,'; head -c 3000 /dev/zero | tr '\0' 'B'; printf '\n'; tail -n +2 traces/helios.csv; } > "$bad/helios_binary.csv"
expect_error trace_binary "$bad/helios_binary.csv line 1: the header has no column 'job_id'; it has id\x01\x02,BBB" \
  --trace "$bad/helios_binary.csv"
err=$("$dtbench" report --trace "$bad/helios_binary.csv" 2>&1 >/dev/null) || true
(( ${#err} < 800 )) || fail "a binary trace header is echoed whole (${#err} bytes)"
sed '3s/,2026-11-20 10:00:00,2026-11-20 10:00:03,/,1e300,2026-11-20 10:00:03,/' traces/helios.csv > "$bad/helios_huge.csv"
expect_error trace_huge "$bad/helios_huge.csv line 3: column 'submit_time': '1e300' is not a time" \
  --trace "$bad/helios_huge.csv"
sed '6s/,8,32,1,COMPLETED,/,-8,32,1,COMPLETED,/' traces/helios.csv > "$bad/helios_negative.csv"
expect_error trace_negative "$bad/helios_negative.csv line 6: column 'gpu_num': '-8': negative GPUs" \
  --trace "$bad/helios_negative.csv"
sed '3s/2026-11-20 10:00:03/yesterday/' traces/helios.csv > "$bad/helios_time.csv"
expect_error trace_time "$bad/helios_time.csv line 3: column 'start_time': 'yesterday' is not a time" \
  --trace "$bad/helios_time.csv"
head -c -20 traces/helios.csv > "$bad/helios_truncated.csv"
expect_error trace_truncated "$bad/helios_truncated.csv line 14: has 9 fields, the header has 11 (the last line has no newline: the file is truncated)" \
  --trace "$bad/helios_truncated.csv"
expect_error unmapped "traces/philly_like.csv line 1: the header has no column 'job_id'; it has jobid," \
  --trace traces/philly_like.csv

# A column map naming a column the Helios layout does not have is a usage error.
rc=0
err=$("$dtbench" report --trace traces/helios.csv --trace-columns gpus=num_gpus 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 2 ]] && grep -qF "'gpus' is not a column of the Helios layout" <<<"$err" || fail "bad --trace-columns: exit $rc: $err"

[[ $status -eq 0 ]] && echo "report traces test: all outputs equal the approved ones, malformed files named"
exit $status
