#!/usr/bin/env bash
# dtbench report --plots on the golden fixture: every figure is drawn as a valid PNG and PDF,
# figures.json and plots.py are kept beside them, and plots.py redraws the same files alone.
# Usage: report_figures_test.sh DTBENCH FIXTURE_DIR
set -euo pipefail
dtbench=$1 fixture=$2
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "python3-matplotlib is missing: run scripts/install_deps.sh" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dtbench" report "$fixture/runs" --plots "$tmp/fig" > "$tmp/report.md" 2> "$tmp/stderr"
grep -q "figure files in $tmp/fig" "$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }

status=0
expected=(speedup compute_comm batch_time_cdf curves throughput
          traffic_lenet-b32-n2 traffic_lenet-b32-n2-repeat traffic_lenet-b64-n2
          traffic_lenet-b32-n2-mismatched traffic_lenet-b32-n2-interrupted
          link_throughput_lenet-b32-n2 link_throughput_lenet-b64-n2)
for name in "${expected[@]}"; do
  png=$tmp/fig/$name.png pdf=$tmp/fig/$name.pdf
  if [[ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
    echo "FAIL: $name.png is missing or not a PNG" >&2; status=1
  elif [[ $(stat -c %s "$png") -lt 5000 ]]; then
    echo "FAIL: $name.png is suspiciously small ($(stat -c %s "$png") bytes)" >&2; status=1
  fi
  [[ "$(head -c 5 "$pdf" 2>/dev/null)" == "%PDF-" ]] || { echo "FAIL: $name.pdf is missing or not a PDF" >&2; status=1; }
done
# The PNG's size in its header: 150 dpi figures are at least 600 pixels wide.
width=$(/usr/bin/python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(struct.unpack(">I", d[16:20])[0])' "$tmp/fig/speedup.png")
[[ $width -ge 600 ]] || { echo "FAIL: speedup.png is $width pixels wide" >&2; status=1; }
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["speedup"]) == 2 and len(d["traffic"]) == 5 and len(d["link_throughput"]) == 5, d.keys()' \
  "$tmp/fig/figures.json" || { echo "FAIL: figures.json does not hold the fixture's series" >&2; status=1; }
# Table 1's speedup interval (EXPECTED.md): the B = 64 series' N = 2 point, from its extrapolated baseline,
# 1.870968 ± 0.193215, drawn as an error bar; no other point has one.
/usr/bin/python3 -c 'import json, sys
pm = {(s["batch"], p["N"]): p.get("speedup_pm") for s in json.load(open(sys.argv[1]))["speedup"] for p in s["points"]}
assert abs(pm.pop((64, 2)) - 0.193215) < 1e-5 and set(pm.values()) == {None}, pm' "$tmp/fig/figures.json" ||
  { echo "FAIL: figures.json's speedup points do not carry Table 1's speedup_pm" >&2; status=1; }

mkdir "$tmp/again"
/usr/bin/python3 "$tmp/fig/plots.py" "$tmp/fig/figures.json" "$tmp/again" > "$tmp/again.list"
# Every figure of the first drawing again: 5 traffic maps and 5 link plots, 5 others, PNG and PDF each.
[[ $(wc -l < "$tmp/again.list") -eq 30 ]] ||
  { echo "FAIL: plots.py alone drew $(wc -l < "$tmp/again.list") files" >&2; status=1; }

# The wire figures (docs/wire.md) of wire_fixture's two runs of batch 32 and 64.
"$dtbench" report "$(dirname "$fixture")/wire_fixture/runs" --plots "$tmp/wire" > /dev/null 2> "$tmp/wire.err" ||
  { echo "FAIL: the report of wire_fixture exits non-zero: $(cat "$tmp/wire.err")" >&2; status=1; }
wire=(wire_heatmap_wire-b32 wire_heatmap_wire-b64 wire_throughput_wire-b32 wire_throughput_wire-b64
      wire_flows_wire-b32 wire_flows_wire-b64 wire_batch_size_effect)
for name in "${wire[@]}"; do
  png=$tmp/wire/$name.png
  if [[ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
    echo "FAIL: $name.png is missing or not a PNG" >&2; status=1
  elif [[ $(stat -c %s "$png") -lt 5000 ]]; then
    echo "FAIL: $name.png is suspiciously small ($(stat -c %s "$png") bytes)" >&2; status=1
  fi
  [[ "$(head -c 5 "$tmp/wire/$name.pdf" 2>/dev/null)" == "%PDF-" ]] || { echo "FAIL: $name.pdf is missing or not a PDF" >&2; status=1; }
done
# The throughput window (wire_fixture/EXPECTED.md, "Figures"): b64 three steps, b32 the capture's middle.
/usr/bin/python3 -c 'import json, sys
w = {e["id"]: e for e in json.load(open(sys.argv[1]))["wire"]}
b64, b32 = w["wire-b64"]["window"], w["wire-b32"]["window"]
assert (b64["from"], round(b64["start_s"], 2), round(b64["end_s"], 2)) == ("steps", 1795300400.5, 1795300402.31), b64
assert (b32["from"], round(b32["start_s"], 2), round(b32["end_s"], 2)) == ("middle of the capture", 1795300102.0, 1795300102.1), b32
assert [len(e["flows"]) for e in (w["wire-b32"], w["wire-b64"])] == [3, 4]
assert w["wire-b32"]["hosts"] == ["controller", "node1", "node2"]' "$tmp/wire/figures.json" ||
  { echo "FAIL: figures.json's wire entries are not wire_fixture's" >&2; status=1; }

# The job traces' figures: a sacct file and a Helios-layout trace on the same axes, without runs.
traces=$(dirname "$fixture")/trace_fixture/traces
TZ=UTC "$dtbench" report --sacct "$traces/sacct.txt" --trace "$traces/helios.csv" --plots "$tmp/traces" > /dev/null \
  2> "$tmp/traces.err" || { echo "FAIL: the report of the traces exits non-zero: $(cat "$tmp/traces.err")" >&2; status=1; }
trace_figures=(trace_duration_cdf trace_queue_delay_cdf trace_final_states trace_gpu_time_by_size)
for name in "${trace_figures[@]}"; do
  png=$tmp/traces/$name.png
  if [[ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
    echo "FAIL: $name.png is missing or not a PNG" >&2; status=1
  elif [[ $(stat -c %s "$png") -lt 5000 ]]; then
    echo "FAIL: $name.png is suspiciously small ($(stat -c %s "$png") bytes)" >&2; status=1
  fi
  [[ "$(head -c 5 "$tmp/traces/$name.pdf" 2>/dev/null)" == "%PDF-" ]] || { echo "FAIL: $name.pdf is missing or not a PDF" >&2; status=1; }
done
# One entry per trace; the duration CDFs end at 1 (trace_fixture/EXPECTED.md).
/usr/bin/python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["traces"]
assert [e["name"].rsplit("/", 1)[-1] for e in t] == ["sacct.txt", "helios.csv"], [e["name"] for e in t]
assert all(e["duration"]["jobs_share"][-1] == 1 and e["duration"]["gpu_time_share"][-1] == 1 for e in t)
assert [sum(r["jobs"][0] for r in e["states"]) for e in t] == [5, 9]' "$tmp/traces/figures.json" ||
  { echo "FAIL: figures.json's traces are not trace_fixture's" >&2; status=1; }

[[ $status -eq 0 ]] && echo "report figures test: $((${#expected[@]} + ${#wire[@]} + ${#trace_figures[@]})) figures as PNG and PDF"
exit $status
