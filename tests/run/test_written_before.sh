#!/usr/bin/env bash
# A run directory written before run/ owned the run's files reads as it did then, and continues.
# fixtures/main-0ad05bc/sweep was written by dtbench at commit 0ad05bc (fixtures/main-0ad05bc/README.md
# says how): a local sweep of lenet on 1, 2 and 3 ranks whose 3-rank point was stopped by SIGTERM in
# epoch 2, so it holds an interrupted run with its checkpoint beside two completed runs. expected/
# holds what 0ad05bc's own binary printed for it. Checked with this build:
#   - dtbench report's tables (JSON) hold what 0ad05bc's did: every table, column and value it had
#     (columns added since must be empty for these runs, which recorded neither FLOPs nor devices; columns
#     renamed since compared under their new names, GPU time empty for these CPU runs); the
#     Markdown report is printed; dtbench predict prints the tables it printed (columns and tables added
#     since aside, on the hardware file of then kept in the fixture), but from each step's last rank out of
#     backward, as predict takes a run of several ranks since 2026-11-28 (expected/predict-world2-last-rank.md,
#     the fixture's README says how it differs from 0ad05bc's predict-world2.md); predict --describe the same bytes;
#   - --resume of the interrupted run from 0ad05bc's checkpoint completes with the parameter checksum
#     0ad05bc's resume reached (12.506991311518703, to its machine's last rounding: same_end below);
#   - the same sweep command again skips the completed points and runs the interrupted one to the same
#     checksum.
# Usage: test_written_before.sh DTBENCH FIXTURE_DIR
set -euo pipefail
dtbench=$(realpath "$1") fixture=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

same() {  # same NAME EXPECTED_FILE COMMAND...: the command's output equals the expected file
  local name=$1 expected=$2; shift 2
  if ! "$@" > "$tmp/$name" 2>&1; then fail "$name: exit non-zero: $(head -3 "$tmp/$name")"; return; fi
  diff -u "$expected" "$tmp/$name" > "$tmp/$name.diff" || fail "$name differs from 0ad05bc's:
$(head -40 "$tmp/$name.diff")"
}

# The report's tables as 0ad05bc printed them (report.json), in this build's: every table it had, with
# every column it had, holding the same values row for row. Columns and notes added since (Table 1's
# speed of light and check, Table 2's critical_rank) are not 0ad05bc's to compare; an added column must
# be empty for these runs, which recorded neither FLOPs nor devices.
same_tables() {  # same_tables EXPECTED_JSON NOW_JSON
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
then = {t["name"]: t for t in json.load(open(sys.argv[1], encoding="utf-8"))}
now = {t["name"]: t for t in json.load(open(sys.argv[2], encoding="utf-8"))}
# Columns renamed since, compared under their new names: the job table's `gpus` is `ranks` and its Unix
# `start` is `start_unix_s` (`start` is now a UTC time); the cost table's `gpu_hours` of these CPU runs is
# `rank_hours`. Columns that CPU runs leave empty since (they hold no GPU): gpu_hours, gpu_seconds.
renamed = {("jobs", "gpus"): "ranks", ("jobs", "start"): "start_unix_s", ("cost", "gpu_hours"): "rank_hours"}
empty_for_cpu = {("cost", "gpu_hours"), ("jobs", "gpu_seconds")}
for (table, column), new_name in renamed.items():
    if table in then and column in then[table]["columns"]:
        old = then[table]
        old["columns"] = [new_name if c == column else c for c in old["columns"]]
        if old["rows"] and isinstance(old["rows"][0], dict):
            old["rows"] = [{(new_name if k == column else k): v for k, v in r.items()} for r in old["rows"]]
empty_since = {"GFLOP_s_per_rank", "MFU", "of_gemm_probe", "peak_host_GB", "peak_gpu_GB", "check"}  # T_pm_s comes from batches.csv, which they have
# 0ad05bc ran before the ranks met after rank 0's evaluation: its evaluated runs of several ranks hold it in
# epoch 2's T, and Table 1 says so (docs/report.md, "What T(N) includes").
flagged = {("time_speedup", "check"): "eval in T"}
problems = []
for name, old in then.items():
    new = now.get(name)
    if new is None:
        problems.append(f"table {name} is gone")
        continue
    missing = [c for c in old["columns"] if c not in new["columns"]]
    if missing:
        problems.append(f"table {name} lost columns {missing}")
        continue
    if len(new["rows"]) != len(old["rows"]):
        problems.append(f"table {name}: {len(new['rows'])} rows, 0ad05bc had {len(old['rows'])}")
        continue
    def cell(table, row, column):
        return row[table["columns"].index(column)] if isinstance(row, list) else row[column]
    for i, (o, n) in enumerate(zip(old["rows"], new["rows"])):
        for c in old["columns"]:
            if (name, c) in empty_for_cpu:
                if cell(new, n, c) is not None:
                    problems.append(f"table {name} row {i} {c}: {cell(new, n, c)!r} for a CPU run")
                continue
            if cell(old, o, c) != cell(new, n, c):
                problems.append(f"table {name} row {i} {c}: {cell(new, n, c)!r}, 0ad05bc {cell(old, o, c)!r}")
        for c in empty_since & set(new["columns"]):
            if (name, c) in flagged and cell(new, n, "N") > 1 and cell(new, n, c) == flagged[(name, c)]:
                continue
            if cell(new, n, c) not in ("", None):
                problems.append(f"table {name} row {i}: added column {c} is {cell(new, n, c)!r} for a run without it")
if problems:
    sys.exit("\n".join(problems[:20]))
PY
}

# The same for Markdown output (predict's): every "## " table 0ad05bc printed, with its columns, rows
# and notes; tables, columns, notes and named facts (rows of Assumed and Inputs) added since are not
# 0ad05bc's (the Assumed table, Table 1's speed of light, empty for these runs; the band).
same_markdown_tables() {  # same_markdown_tables EXPECTED_MD NOW_MD
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
def tables(path):
    out, title = {}, None
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.startswith("## "):
            title = line[3:]
            out[title] = {"rows": [], "notes": []}
        elif title and line.startswith("|") and not line.startswith("|---"):
            out[title]["rows"].append([c.strip() for c in line.strip("|").split("|")])
        elif title and line.startswith("- "):
            out[title]["notes"].append(line)
    return out
then, now = tables(sys.argv[1]), tables(sys.argv[2])
empty_since = {"GFLOP_s_per_rank", "MFU", "of_gemm_probe"}
problems = []
for title, old in then.items():
    new = now.get(title)
    if new is None:
        problems.append(f"table {title!r} is gone")
        continue
    header, rows = old["rows"][0], old["rows"][1:]
    nheader, nrows = new["rows"][0], new["rows"][1:]
    # A table of named facts (its first column names each row: Assumed's `what`, Inputs' `input`) may gain
    # facts: each of 0ad05bc's rows is matched by its name. Any other table keeps its rows one for one.
    if header[0] in ("what", "input") and nheader[:1] == header[:1]:
        named = {r[0]: r for r in nrows}
        missing = [r[0] for r in rows if r[0] not in named]
        if missing:
            problems.append(f"table {title!r} lost the rows {missing}")
            continue
        nrows = [named[r[0]] for r in rows]
    if any(c not in nheader for c in header) or len(rows) != len(nrows):
        problems.append(f"table {title!r}: columns {nheader} / {len(nrows)} rows, 0ad05bc {header} / {len(rows)} rows")
        continue
    for i, (o, n) in enumerate(zip(rows, nrows)):
        for c in header:
            if o[header.index(c)] != n[nheader.index(c)]:
                problems.append(f"table {title!r} row {i} {c}: {n[nheader.index(c)]!r}, 0ad05bc {o[header.index(c)]!r}")
        for c in empty_since & set(nheader):
            if n[nheader.index(c)] != "":
                problems.append(f"table {title!r} row {i}: added column {c} is {n[nheader.index(c)]!r} for a run without it")
    problems += [f"table {title!r} lost the note {note!r}" for note in old["notes"] if note not in new["notes"]]
if problems:
    sys.exit("\n".join(problems[:20]))
PY
}

# The outputs name paths relative to where they were made: the same layout, in a copy.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir "$tmp/fixture"
cp -r "$fixture/sweep" "$tmp/fixture/"
cp "$fixture/dgx-a100-hdr200.json" "$tmp/fixture/"
cd "$tmp/fixture"
"$dtbench" report sweep --format json > "$tmp/report.json" 2>&1 || fail "report --format json: exit non-zero"
same_tables "$fixture"/expected/report.json "$tmp/report.json" || fail "report.json's tables differ from 0ad05bc's"
"$dtbench" report sweep > "$tmp/report.md" 2>&1 || fail "report: exit non-zero: $(head -3 "$tmp/report.md")"
"$dtbench" predict sweep/world2 --hardware dgx-a100-hdr200.json --world 2,4,8 > "$tmp/predict.md" 2>&1 ||
  fail "predict: exit non-zero: $(head -3 "$tmp/predict.md")"
same_markdown_tables "$fixture"/expected/predict-world2-last-rank.md "$tmp/predict.md" ||
  fail "predict's tables differ from expected/predict-world2-last-rank.md's"
same describe-world1.json "$fixture"/expected/describe-world1.json "$dtbench" predict --describe sweep/world1

checksum() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], repr(d.get("param_checksum")))' "$1"; }
# The same training to the last float32 rounding of the machine it ran on: LibTorch picks its kernels by the
# CPU's instruction set, so 0ad05bc's checksum (12.506991311518703, its machine's) and this machine's differ
# in the 8th digit (measured: 12.506991513836255 for the resume and 12.506992154854316 for the run made
# anew on an AVX-512 Xeon, 1.6e-8 and 6.7e-8 relative), while one step less or more moves it by far more
# (the 6 steps of epoch 2 move it from -1.78 to 12.51). Completed, within 1e-6 relative.
same_end() {  # same_end SUMMARY_JSON
  /usr/bin/python3 - "$1" "$expected_end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
status, value = sys.argv[2].split()
got = d.get("param_checksum")
sys.exit(0 if d.get("status") == status and got is not None and abs(got - float(value)) <= 1e-6 * abs(float(value)) else 1)
PY
}
flags=(--model lenet --dataset synthetic --synthetic-train-size 480 --synthetic-test-size 48 --batch-size 16 --epochs 2
       --max-steps 6 --threads 1 --quiet --topology ring --inject-delay-ms 40 --seed 7)
expected_end="completed 12.506991311518703"

cp -r sweep "$tmp/resumed"
if "$dtbench" launch -n 3 -- "$dtbench" train "${flags[@]}" --out "$tmp/resumed/world3" --resume > "$tmp/resume.out" 2>&1; then
  same_end "$tmp/resumed/world3/summary.json" ||
    fail "--resume of 0ad05bc's checkpoint ended '$(checksum "$tmp/resumed/world3/summary.json")', 0ad05bc's resume '$expected_end'"
else
  fail "--resume of 0ad05bc's checkpoint failed: $(tail -5 "$tmp/resume.out")"
fi

cp -r sweep "$tmp/again"
(cd "$tmp/again" && "$dtbench" sweep --out . --grid world=1,2,3 -- "${flags[@]}" > "$tmp/sweep.out" 2>&1) ||
  fail "the sweep again failed: $(tail -5 "$tmp/sweep.out")"
for point in world1 world2; do
  grep -qE "^$point +skipped \(completed\)" "$tmp/sweep.out" || fail "the sweep again did not skip $point: $(cat "$tmp/sweep.out")"
done
grep -qE '^world3 +completed .* attempt 2$' "$tmp/sweep.out" || fail "the sweep again did not complete world3 as attempt 2"
[[ -d "$tmp/again/world3.attempt-1/checkpoint" ]] || fail "the interrupted attempt was not kept as world3.attempt-1"
same_end "$tmp/again/world3/summary.json" ||
  fail "the sweep's world3 ended '$(checksum "$tmp/again/world3/summary.json")', 0ad05bc's '$expected_end'"
exit $status
