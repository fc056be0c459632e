#!/usr/bin/env bash
# dtbench report beside damaged runs: each kind of damage a run directory can have (duplicated rows
# from a --resume, rows that disagree with summary.json's steps, NaN, infinite, negative or
# impossible times, a world size that is not a count, a FIFO or a directory where a file belongs)
# makes one extra run beside the golden fixture's runs. The report must leave each out with a
# reason naming the file (and the line and column for a bad cell), exit 0, and print every table of
# the good runs exactly as without them. The damaged copies are made from lenet-b32-n1 (the B = 32
# baseline: if its numbers were used they would become a second repeat and change every speedup)
# and lenet-b32-n2 (several ranks, traffic), and a run that died without recording its end (summary.json still
# running, its lock free). Also: a byte order mark in every CSV changes nothing,
# and a bad --csv-dir, --job-table or --plots fails before anything is printed; device phases left
# empty (not timed) are not damage.
# Usage: test_bad_runs.sh DTBENCH FIXTURE_DIR
set -uo pipefail
dtbench=$(realpath "$1") fixture=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# Every table that shows a run's numbers (the job table lists every run), then the runs left out.
tables=time_speedup,compute_comm,bandwidth,traffic,batch_times,cost,best,accuracy,excluded
report() {  # report DIR OUT: the tables of DIR/runs, run from DIR so that paths are alike
  (cd "$1" && timeout 60 "$dtbench" report runs --gpu-hour-price 2.5 --target-accuracy 0.5 --format csv \
    --table "$tables" > "$2" 2> "$2.err")
}
numbers() { sed '/^# Runs left out of the tables$/,$d' "$1"; }  # the tables before the runs left out

mkdir -p "$tmp/good"
cp -r "$fixture/runs" "$tmp/good/runs"
report "$tmp/good" "$tmp/good.csv" || fail "the report of the good runs exits $?: $(cat "$tmp/good.csv.err")"

set_field() {  # set_field FILE LINE COLUMN VALUE (1-based line and column)
  awk -F, -v OFS=, -v line="$2" -v col="$3" -v value="$4" 'NR == line { $col = value } 1' "$1" > "$1.new" &&
    mv "$1.new" "$1"
}
set_json() {  # set_json FILE PYTHON_EXPRESSION_ON_d
  /usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=2)' "$1" "$2"
}

# All damaged runs go into one copy of the fixture (one report: dtbench starts slowly under load).
mkdir -p "$tmp/bad"
cp -r "$fixture/runs" "$tmp/bad/runs"
reasons=()
# bad_run NAME SOURCE REASON: copies fixture run SOURCE to runs/bad-NAME and applies the damage the
# function damage_NAME does to it (given the copy's directory); the report must say REASON.
bad_run() {
  cp -r "$fixture/runs/$2" "$tmp/bad/runs/bad-$1"
  "damage_$1" "$tmp/bad/runs/bad-$1"
  reasons+=("$1" "$3")
}

# batches.csv of lenet-b32-n1: line 1 is the header, lines 2-9 epoch 1, lines 10-17 epoch 2.
# Columns: 1 rank, 2 epoch, 3 step, 4 samples, 5 data_s, 8 backward_s, 10 comm_exposed_s, 12 step_s.
damage_duplicates() { sed -n '12,17p' "$1/batches.csv" >> "$1/batches.csv"; }  # a --resume re-wrote steps 3-8
damage_fewer_rows() { sed -i '17d' "$1/batches.csv"; }
damage_more_steps() { set_json "$1/summary.json" 'd["epochs"][1]["steps"] = 9'; }
damage_nan() { set_field "$1/batches.csv" 12 12 nan; }
damage_negative() { set_field "$1/batches.csv" 12 12 -0.25; }
damage_zero() { set_field "$1/batches.csv" 12 12 0; }
damage_inf() { set_field "$1/batches.csv" 12 12 inf; }
damage_huge() { set_field "$1/batches.csv" 12 12 1e308; }
damage_data_over_step() { set_field "$1/batches.csv" 12 5 9.5; }
damage_negative_phase() { set_field "$1/batches.csv" 12 8 -0.1; }
damage_exposed_over_step() { set_field "$1/batches.csv" 12 10 7; }
damage_samples() { set_field "$1/batches.csv" 12 4 -32; }
damage_rank() { set_field "$1/batches.csv" 12 1 -1; }
damage_history_time() { set_field "$1/train_history.log" 3 1 inf; }
damage_world_negative() { set_json "$1/config.json" 'd["world_size"] = -2'; }
damage_world_huge() { set_json "$1/config.json" 'd["world_size"] = 10**12'; }
damage_world_hosts() { set_json "$1/config.json" 'd["world_size"] = 3'; }
damage_fifo() { rm "$1/batches.csv" && mkfifo "$1/batches.csv"; }
damage_config_fifo() { rm "$1/config.json" && mkfifo "$1/config.json"; }
damage_directory() { rm "$1/batches.csv" && mkdir "$1/batches.csv"; }
# A wire/ folder (docs/wire.md, from wire_fixture) with a bad field, or a file where the folder belongs.
wire_fixture=$(dirname "$fixture")/wire_fixture/runs/wire-b32/wire
damage_wire_field() { cp -r "$wire_fixture" "$1/wire" && set_field "$1/wire/wire_links.csv" 4 6 1e5x; }
damage_wire_rank() { cp -r "$wire_fixture" "$1/wire" && set_field "$1/wire/wire_flows.csv" 2 9 -2; }
damage_wire_file() { touch "$1/wire"; }
# A run killed on the way: summary.json still says running, and no process holds its lock file.
damage_died() { set_json "$1/summary.json" 'd["status"] = "running"; d.pop("finished_at", None)' && touch "$1/dtbench.lock"; }
# Recorded facts out of range: a plan of what each bucket all-reduces that does not fit the bucket (it gave a
# compression ratio of 0.006), a rank with no cores.
damage_collectives() {
  set_json "$1/config.json" 'd["bucket_collectives"] = [[{"what": "gradients", "elements": 1, "dtype": "float32"}]]'
}
damage_cores() {
  set_json "$1/config.json" 'd["devices"] = [{"type": "cpu", "model": "x", "host": "vm", "boot_id": "b", "cores": 0, "threads": 1}] * 2'
}

bad_run duplicates lenet-b32-n1 "batches.csv line 18 column 'step': rank 0 epoch 2 step 3 again (first at line 12)"
bad_run fewer_rows lenet-b32-n1 "batches.csv has 7 epoch 2 rows per rank, summary.json says the epoch had 8 steps"
bad_run more_steps lenet-b32-n1 "batches.csv has 8 epoch 2 rows per rank, summary.json says the epoch had 9 steps"
bad_run nan lenet-b32-n1 "batches.csv line 12 column 'step_s': 'nan' is not a time"
bad_run negative lenet-b32-n1 "batches.csv line 12 column 'step_s': '-0.25' is not a time"
bad_run zero lenet-b32-n1 "batches.csv line 12 column 'step_s': '0' is not a step time"
bad_run inf lenet-b32-n1 "batches.csv line 12 column 'step_s': 'inf' is not a time"
bad_run huge lenet-b32-n1 "batches.csv line 12 column 'step_s': '1e308' is not a step's time (more than a year)"
bad_run data_over_step lenet-b32-n1 "batches.csv line 12 column 'data_s': '9.5' is more than the row's step_s"
bad_run negative_phase lenet-b32-n1 "batches.csv line 12 column 'backward_s': '-0.1' is not a time"
bad_run exposed_over_step lenet-b32-n1 "batches.csv line 12 column 'comm_exposed_s': '7' is more than the row's step_s"
bad_run samples lenet-b32-n1 "batches.csv line 12 column 'samples': '-32' is out of range"
bad_run rank lenet-b32-n1 "batches.csv line 12 column 'rank': '-1' is out of range"
bad_run history_time lenet-b32-n1 "train_history.log line 3 column 'Timestamp': 'inf' is not a Unix time"
bad_run world_negative lenet-b32-n2 "config.json: world_size: --world-size must be >= 1, got -2"
bad_run world_huge lenet-b32-n2 "config.json: world_size: --world-size takes a whole number in range, got 1000000000000"
bad_run world_hosts lenet-b32-n2 "config.json: world_size 3 but hosts names 2 hosts"
bad_run fifo lenet-b32-n2 "batches.csv is a FIFO (named pipe), not a regular file"
bad_run config_fifo lenet-b32-n2 "config.json is a FIFO (named pipe), not a regular file"
bad_run directory lenet-b32-n2 "batches.csv is a directory, not a regular file"
bad_run wire_field lenet-b32-n2 "wire/wire_links.csv line 4 column 'frame_bytes': '1e5x' is not an integer"
bad_run wire_rank lenet-b32-n2 "wire/wire_flows.csv line 2 column 'src_rank': '-2' is not a rank"
bad_run wire_file lenet-b32-n2 "wire is not a directory"
bad_run died lenet-b32-n2 "status failed: died without recording its end"
bad_run collectives lenet-b32-n2 "bucket_collectives bucket 0: --compress none sends one all-reduce of its 62007 elements in float32"
bad_run cores lenet-b32-n2 "config.json: devices cores takes a whole number >= 1, got 0"

if ! report "$tmp/bad" "$tmp/bad.csv"; then
  fail "the report with damaged runs exits non-zero: $(cat "$tmp/bad.csv.err")"
else
  # The good runs' rows; a run left out for its row count still has its own row in the batch-time
  # and accuracy tables (docs/report.md), which is not the good runs' business.
  numbers "$tmp/bad.csv" | grep -v "^bad-" > "$tmp/good_rows.csv"
  diff -u <(numbers "$tmp/good.csv") "$tmp/good_rows.csv" > "$tmp/diff" ||
    fail "the good runs' tables changed beside damaged runs:"$'\n'"$(head -n 40 "$tmp/diff")"
  sed -n '/^# Runs left out of the tables$/,$p' "$tmp/bad.csv" > "$tmp/excluded.csv"
  for ((i = 0; i < ${#reasons[@]}; i += 2)); do
    grep "^bad-${reasons[i]}," "$tmp/excluded.csv" | grep -qF -- "${reasons[i + 1]}" ||
      fail "${reasons[i]}: not left out with '${reasons[i + 1]}'; the runs left out:"$'\n'"$(cat "$tmp/excluded.csv")"
  done
fi

# A UTF-8 byte order mark at the start of every CSV (as spreadsheet programs save them): the same report.
mkdir -p "$tmp/bom"
cp -r "$fixture/runs" "$tmp/bom/runs"
while IFS= read -r -d '' csv; do
  { printf '\xEF\xBB\xBF'; cat "$csv"; } > "$csv.new" && mv "$csv.new" "$csv"
done < <(find "$tmp/bom/runs" \( -name '*.csv' -o -name '*.log' \) -print0)
report "$tmp/bom" "$tmp/bom.csv" || fail "the report with byte order marks exits non-zero: $(cat "$tmp/bom.csv.err")"
diff -u "$tmp/good.csv" "$tmp/bom.csv" > "$tmp/bom.diff" ||
  fail "byte order marks change the report:"$'\n'"$(head -n 40 "$tmp/bom.diff")"

# Device phases that were not timed (--phase-timing none: empty h2d_s, forward_s, backward_s and
# optimizer_s cells, columns 6, 7, 8 and 11) are no damage: the same report.
mkdir -p "$tmp/untimed"
cp -r "$fixture/runs" "$tmp/untimed/runs"
while IFS= read -r -d '' csv; do
  awk -F, -v OFS=, 'NR > 1 { $6 = ""; $7 = ""; $8 = ""; $11 = "" } 1' "$csv" > "$csv.new" && mv "$csv.new" "$csv"
done < <(find "$tmp/untimed/runs" -name batches.csv -print0)
report "$tmp/untimed" "$tmp/untimed.csv" ||
  fail "the report with untimed device phases exits non-zero: $(cat "$tmp/untimed.csv.err")"
diff -u "$tmp/good.csv" "$tmp/untimed.csv" > "$tmp/untimed.diff" ||
  fail "empty device-phase cells change the report:"$'\n'"$(head -n 40 "$tmp/untimed.diff")"

# Output destinations are checked before any table is printed.
touch "$tmp/a_file"
bad_output() {  # bad_output PATTERN ARGS...
  local pattern=$1 rc=0
  shift
  (cd "$tmp/good" && timeout 60 "$dtbench" report runs "$@" > "$tmp/out.md" 2> "$tmp/out.err") || rc=$?
  if [[ $rc -eq 0 ]] || ! grep -qF -- "$pattern" "$tmp/out.err"; then
    fail "dtbench report $*: exit $rc, expected a failure with '$pattern'; stderr: $(cat "$tmp/out.err")"
  elif [[ -s "$tmp/out.md" ]]; then
    fail "dtbench report $*: printed $(wc -l < "$tmp/out.md") lines before failing"
  fi
}
bad_output "--csv-dir: $tmp/a_file exists and is not a directory" --csv-dir "$tmp/a_file"
bad_output "--csv-dir: cannot create the directory $tmp/a_file/csv" --csv-dir "$tmp/a_file/csv"
bad_output "--plots: $tmp/a_file exists and is not a directory" --plots "$tmp/a_file"
bad_output "--job-table: $tmp is a directory" --job-table "$tmp"
bad_output "--job-table: the directory $tmp/no-such-dir of $tmp/no-such-dir/jobs.csv does not exist" \
  --job-table "$tmp/no-such-dir/jobs.csv"

[[ $status -eq 0 ]] && echo "report bad-runs test: every damaged run left out with its reason, the others unchanged"
exit $status
