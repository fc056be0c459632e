#!/usr/bin/env bash
# A run directory written before run/ owned the run's files reads as it did then, and continues.
# fixtures/main-0ad05bc/sweep was written by dtbench at commit 0ad05bc (fixtures/main-0ad05bc/README.md
# says how): a local sweep of lenet on 1, 2 and 3 ranks whose 3-rank point was stopped by SIGTERM in
# epoch 2, so it holds an interrupted run with its checkpoint beside two completed runs. expected/
# holds what 0ad05bc's own binary printed for it. Checked with this build:
#   - dtbench report (Markdown and JSON), dtbench predict and predict --describe print the same bytes,
#     apart from what the report added since: Table 1's speed-of-light columns (GFLOP_s_per_rank, MFU,
#     of_gemm_probe) and its check column, which must be empty for these runs (written before FLOPs and
#     devices were recorded), and their notes: both are taken out before comparing;
#   - --resume of the interrupted run from 0ad05bc's checkpoint completes with the parameter checksum
#     0ad05bc's resume reached (12.506991311518703);
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

# The report's output less what was added since 0ad05bc (above), failing where an added column is not
# empty. Markdown: the lines; JSON: the parsed tables, printed again as the expected file is.
without_added() {  # without_added FILE md|json
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
path, kind = sys.argv[1], sys.argv[2]
added = ["GFLOP_s_per_rank", "MFU", "of_gemm_probe", "check"]
notes = ["- `GFLOP_s_per_rank`", "- `check`"]
if kind == "md":
    out, drop = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if any(line.startswith(n) for n in notes):
            continue
        cells = line.split("|")
        if line.startswith("| model |") and any(c.strip() == "GFLOP_s_per_rank" for c in cells):
            drop = {i for i, c in enumerate(cells) if c.strip() in added}
        elif not line.startswith("|"):
            drop = None
        if drop:
            if not line.startswith("| model |") and not line.startswith("|---") and any(cells[i].strip() for i in drop):
                sys.exit(f"an added column is not empty: {line}")
            line = "|".join(c for i, c in enumerate(cells) if i not in drop)
        out.append(line)
    open(path, "w", encoding="utf-8").write("\n".join(out))
else:
    tables = json.load(open(path, encoding="utf-8"))
    for t in tables:
        if t.get("name") != "time_speedup":
            continue
        keep = [i for i, c in enumerate(t["columns"]) if c not in added]
        for row in t["rows"]:
            cells = row if isinstance(row, list) else [row[c] for c in t["columns"]]
            if any(cells[i] not in ("", None) for i, c in enumerate(t["columns"]) if c in added):
                sys.exit(f"an added column is not empty: {row}")
        t["rows"] = [[row[i] for i in keep] if isinstance(row, list) else {k: v for k, v in row.items() if k not in added}
                     for row in t["rows"]]
        t["columns"] = [t["columns"][i] for i in keep]
        t["notes"] = [n for n in t["notes"] if not any(n.startswith(p) for p in notes)]
    json.dump(tables, open(path + ".parsed", "w", encoding="utf-8"), sort_keys=True, indent=1)
PY
}

# The outputs name paths relative to where they were made: the same layout, in a copy.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir "$tmp/fixture"
cp -r "$fixture/sweep" "$tmp/fixture/"
cp "$here/../../experiments/predict/systems/dgx-a100-hdr200.json" "$tmp/fixture/"
cd "$tmp/fixture"
"$dtbench" report sweep > "$tmp/report.md" 2>&1 || fail "report: exit non-zero: $(head -3 "$tmp/report.md")"
without_added "$tmp/report.md" md || fail "report.md: the speed-of-light columns"
diff -u "$fixture"/expected/report.md "$tmp/report.md" > "$tmp/report.md.diff" ||
  fail "report.md differs from 0ad05bc's: $(head -40 "$tmp/report.md.diff")"
"$dtbench" report sweep --format json > "$tmp/report.json" 2>&1 || fail "report --format json: exit non-zero"
cp "$fixture"/expected/report.json "$tmp/expected-report.json"
without_added "$tmp/report.json" json || fail "report.json: the speed-of-light columns"
without_added "$tmp/expected-report.json" json
diff -u "$tmp/expected-report.json.parsed" "$tmp/report.json.parsed" > "$tmp/report.json.diff" ||
  fail "report.json differs from 0ad05bc's: $(head -40 "$tmp/report.json.diff")"
same predict-world2.md "$fixture"/expected/predict-world2.md "$dtbench" predict sweep/world2 --hardware dgx-a100-hdr200.json --world 2,4,8
same describe-world1.json "$fixture"/expected/describe-world1.json "$dtbench" predict --describe sweep/world1

checksum() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], repr(d.get("param_checksum")))' "$1"; }
flags=(--model lenet --dataset synthetic --synthetic-train-size 480 --synthetic-test-size 48 --batch-size 16 --epochs 2
       --max-steps 6 --threads 1 --quiet --topology ring --inject-delay-ms 40 --seed 7)
expected_end="completed 12.506991311518703"

cp -r sweep "$tmp/resumed"
if "$dtbench" launch -n 3 -- "$dtbench" train "${flags[@]}" --out "$tmp/resumed/world3" --resume > "$tmp/resume.out" 2>&1; then
  [[ "$(checksum "$tmp/resumed/world3/summary.json")" == "$expected_end" ]] ||
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
[[ "$(checksum "$tmp/again/world3/summary.json")" == "$expected_end" ]] ||
  fail "the sweep's world3 ended '$(checksum "$tmp/again/world3/summary.json")', 0ad05bc's '$expected_end'"
exit $status
