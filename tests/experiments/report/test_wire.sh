#!/usr/bin/env bash
# Golden-file test of dtbench report's wire tables (docs/report.md, "The wire"). wire_fixture/runs
# holds two hand-written runs of 2 ranks on node1 and node2 (batch 32 and 64) with the wire/ folder
# `dtbench capture analyze` writes (docs/wire.md); wire_fixture/EXPECTED.md works every number of
# the tables out by hand, and the approved outputs in wire_fixture/approved/ (Markdown and CSV) were
# checked against it and are compared byte for byte. Also: the wire tables are absent without wire
# data, and a malformed wire file leaves its run out with a reason naming the file, line and column.
# Usage: test_wire.sh DTBENCH WIRE_FIXTURE_DIR [--approve]   (--approve rewrites approved/)
set -euo pipefail
dtbench=$(realpath "$1") fixture=$(realpath "$2") approve=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$fixture"

tables=wire_matrix,wire_flows,burstiness,reconciliation,reconciliation_summary
out=$tmp/out
mkdir -p "$out/csv"
"$dtbench" report runs --table "$tables" > "$out/wire.md"
"$dtbench" report runs --table "$tables" --format csv > "$out/wire.csv"
"$dtbench" report runs --table burstiness --format csv > "$out/burstiness.csv"
"$dtbench" report runs --csv-dir "$out/csv" > /dev/null
find "$out/csv" -type f ! -name 'wire_*' ! -name 'burstiness.csv' ! -name 'reconciliation*' -delete

status=0
fail() { echo "FAIL: $*" >&2; status=1; }
# shellcheck source=approved_outputs.sh
source "$here/approved_outputs.sh"
approve_or_compare "$fixture" "$out" "$approve"

# JSON has the same tables.
"$dtbench" report runs --table "$tables" --format json > "$tmp/wire.json"
/usr/bin/python3 -c 'import json, sys
names = [t["name"] for t in json.load(open(sys.argv[1]))]
assert names == sys.argv[2].split(","), names' "$tmp/wire.json" "$tables" || fail "--format json lacks the wire tables"

# Without wire/ there are no wire tables, and the other tables are as before.
mkdir -p "$tmp/nowire"
cp -r runs "$tmp/nowire/runs"
rm -rf "$tmp/nowire/runs"/*/wire
rc=0
err=$("$dtbench" report "$tmp/nowire/runs" --table wire_matrix 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 2 ]] && grep -qF "no table 'wire_matrix'" <<<"$err" || fail "runs without wire/ still have wire tables: $err"
"$dtbench" report "$tmp/nowire/runs" --table time_speedup --format csv > "$tmp/nowire.csv"
"$dtbench" report runs --table time_speedup --format csv > "$tmp/withwire.csv"
cmp -s "$tmp/nowire.csv" "$tmp/withwire.csv" || fail "wire/ changes the time_speedup table"

# No counted bin in the capture window: the counted columns use the timeline's own span. Without
# wire-b32's bins at 102.05 its timeline keeps 7 bins of 248028 bytes per direction from 100.70 to the
# end of 103.04: mean = 7 · 248028 / 2.35 s = 0.000739 GB/s, peak 0.024803, peak / mean = 2.35 / 0.07.
mkdir -p "$tmp/shifted"
cp -r runs "$tmp/shifted/runs"
sed -i '/^1795300102.05,/d' "$tmp/shifted/runs/wire-b32/traffic_timeline.csv"
"$dtbench" report "$tmp/shifted/runs" --table burstiness --format csv > "$tmp/shifted.csv"
grep -qxF 'wire-b32,node1,up,0.100000,0.010000,0.300000,0.100000,0.060000,30.0000,10.0000,6.0000,timeline,0.000739,0.024803,33.5714' \
  "$tmp/shifted.csv" || fail "the counted side without bins in the capture window:"$'\n'"$(cat "$tmp/shifted.csv")"

# A malformed wire file: its run is left out naming the file, line and column; the other run's wire
# rows are unchanged.
damaged() {  # damaged NAME REASON COMMAND...: damage a copy of wire-b64 with COMMAND (in its wire/)
  local name=$1 reason=$2
  shift 2
  rm -rf "$tmp/bad" && mkdir -p "$tmp/bad" && cp -r runs "$tmp/bad/runs"
  (cd "$tmp/bad/runs/wire-b64/wire" && "$@")
  "$dtbench" report "$tmp/bad/runs" --table excluded --format csv > "$tmp/bad/excluded.csv" ||
    { fail "$name: the report exits non-zero"; return; }
  grep '^wire-b64,' "$tmp/bad/excluded.csv" | grep -qF -- "$reason" ||
    fail "$name: wire-b64 not left out with '$reason':"$'\n'"$(cat "$tmp/bad/excluded.csv")"
  "$dtbench" report "$tmp/bad/runs" --table "$tables" --format csv > "$tmp/bad/wire.csv"
  diff -u <(grep -v '^wire-b64,' "$out/wire.csv") "$tmp/bad/wire.csv" > "$tmp/bad/diff" ||
    fail "$name: the other run's wire rows changed:"$'\n'"$(cat "$tmp/bad/diff")"
}
damaged bytes "wire_links.csv line 3 column 'frame_bytes': 'lots' is not an integer" \
  sed -i '3s/,600000,/,lots,/' wire_links.csv
damaged negative "wire_pairs.csv line 2 column 'tcp_payload_bytes': '-5' is not a count" \
  sed -i '2s/,1120000$/,-5/' wire_pairs.csv
damaged direction "wire_links.csv line 2 column 'direction': 'sideways' is not one of up, down, local" \
  sed -i '2s/,up,/,sideways,/' wire_links.csv
damaged class "wire_flows.csv line 4 column 'class': 'gossip' is not one of backend" \
  sed -i '4s/,store,/,gossip,/' wire_flows.csv
damaged unknown_flow "wire_flow_bins.csv line 2 column 'flow': flow '99' is not in wire_flows.csv" \
  sed -i '2s/,10,/,99,/' wire_flow_bins.csv
damaged truncated "reconciliation.csv line 7 has 6 fields, the header has 10 (a truncated last line?)" \
  sed -i '7s/,0,3000,3000,$//' reconciliation.csv
damaged missing "wire_links.csv is missing (dtbench capture analyze writes it" rm wire_links.csv
damaged summary "wire_summary.json is not valid JSON" sed -i '1s/{/[/' wire_summary.json

[[ $status -eq 0 ]] && echo "report wire test: all outputs equal the approved ones, malformed wire files named"
exit $status
