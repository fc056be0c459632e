#!/usr/bin/env bash
# dtbench capture through the binary: usage errors (exit 2), bad input (exit 1), and, as root, a
# short recording of lo turned into the wire tables (pcaps deleted unless --keep-pcap). In a build
# without libpcap (second argument 0), the options are still checked and every action says so.
set -uo pipefail
dtbench=$1
have_capture=${2:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect CODE TEXT ARGS...: dtbench ARGS exits with CODE and says TEXT on stderr.
expect() {
  local code=$1 text=$2
  shift 2
  local err
  err=$("$dtbench" "$@" 2>&1 >/dev/null)
  local rc=$?
  [[ $rc == "$code" ]] || fail "dtbench $*: exit $rc, expected $code ($err)"
  [[ $err == *"$text"* ]] || fail "dtbench $*: expected '$text' in: $err"
}

expect 2 "name an action" capture
expect 2 "unknown action 'play'" capture play
expect 2 "--interface IF" capture record --node n1 --output "$work/x"
expect 2 "--snaplen is from 64" capture record --node n1 --interface lo --output "$work/x" --snaplen 10
expect 2 "--duration must be" capture record --node n1 --interface lo --output "$work/x" --duration 0
expect 2 "--interface names lo twice" capture record --node n1 --interface lo,lo --output "$work/x"
if [[ $have_capture == 0 ]]; then
  expect 2 "this build has no capture" capture analyze "$work"
  expect 2 "this build has no capture" capture record --node n1 --interface lo --output "$work/x"
  "$dtbench" capture --help | grep -q "capture record" || fail "capture --help does not show the usage"
  ((failures == 0)) && echo "ok (this build has no capture)"
  exit $((failures > 0))
fi
expect 2 "does not exist" capture analyze "$work/nowhere"
touch "$work/afile"
expect 2 "is a file; name the capture directory" capture analyze "$work/afile"
# A capture file naming a pcap outside its directory is refused, and nothing outside is deleted.
mkdir -p "$work/victim" "$work/hostile"
echo precious >"$work/victim/precious.pcap"
for name in ../victim/precious.pcap "$work/victim/precious.pcap"; do
  cat >"$work/hostile/a.capture.json" <<JSON
{"node": "a", "snaplen": 128, "started_s": 1, "stopped_s": 2, "interfaces": [{"name": "lo", "pcap": "$name",
 "link_type": "EN10MB", "addresses": [], "packets_captured": 0, "pcap_received": 0, "pcap_dropped": 0,
 "interface_dropped": 0, "counters_before": {"t_s": 1, "rx_bytes": 0, "rx_packets": 0, "tx_bytes": 0, "tx_packets": 0},
 "counters_after": {"t_s": 2, "rx_bytes": 0, "rx_packets": 0, "tx_bytes": 0, "tx_packets": 0}}]}
JSON
  expect 1 "must be a file name inside the capture directory" capture analyze "$work/hostile"
  [[ -f $work/victim/precious.pcap ]] || fail "analyze deleted $name, outside its directory"
done
expect 2 "see dtbench capture analyze --help" capture analyze "$work" --frobnicate
mkdir -p "$work/empty"
expect 1 "no <node>.capture.json" capture analyze "$work/empty"
expect 2 "is no directory" capture analyze "$work/empty" --messages "$work/nowhere"
"$dtbench" capture --help | grep -q "capture record" || fail "capture --help does not show the usage"

if [[ $(id -u) != 0 ]]; then
  echo "skipped the live recording: capturing needs root"
else
  expect 1 "nosuch0" capture record --node n1 --interface nosuch0 --output "$work/bad"
  expect 1 "eth99" capture record --node n1 --interface lo,eth99 --output "$work/bad2"
  [[ -z $(find "$work/bad2" -name '*.pcap' 2>/dev/null) ]] || fail "a failed record left $(ls "$work/bad2")"
  # One recorder per node and directory; no analysis while a node records.
  "$dtbench" capture record --node n2 --interface lo --output "$work/busy" --duration 3 >"$work/busy.out" 2>&1 &
  first=$!
  for _ in $(seq 1 100); do [[ -f $work/busy/n2.ready ]] && break; sleep 0.05; done
  expect 1 "node n2 is already being recorded into $work/busy (pid $first" \
    capture record --node n2 --interface lo --output "$work/busy" --duration 0.2
  expect 1 "node n2 is still recording into $work/busy" capture analyze "$work/busy" --keep-pcap
  wait "$first" || fail "the first recorder failed: $(cat "$work/busy.out")"
  [[ $(find "$work/busy" -name '*.pcap' | wc -l) == 1 ]] || fail "the busy directory holds $(ls "$work/busy")"
  "$dtbench" capture analyze "$work/busy" --keep-pcap 2>"$work/busy.err" || fail "analyze after the recorder: $(cat "$work/busy.err")"
  out=$("$dtbench" capture record --node n1 --interface lo --output "$work/cap" --duration 0.5 2>"$work/record.err")
  [[ $out == ready ]] || fail "record printed '$out', expected 'ready' ($(cat "$work/record.err"))"
  for f in n1.ready n1.lo.pcap n1.capture.json; do [[ -f $work/cap/$f ]] || fail "record wrote no $f"; done
  "$dtbench" capture analyze "$work/cap" --keep-pcap --output "$work/tables" 2>"$work/analyze.err" ||
    fail "analyze: $(cat "$work/analyze.err")"
  for f in wire_pairs.csv wire_links.csv wire_flows.csv wire_flow_bins.csv wire_retransmissions.csv wire_summary.json; do
    [[ -f $work/tables/$f ]] || fail "analyze wrote no $f"
  done
  [[ -f $work/cap/n1.lo.pcap ]] || fail "--keep-pcap: the pcap is gone"
  "$dtbench" capture analyze "$work/cap" 2>"$work/analyze.err" || fail "analyze: $(cat "$work/analyze.err")"
  [[ ! -e $work/cap/n1.lo.pcap ]] || fail "the pcap was kept without --keep-pcap"
  [[ -f $work/cap/wire_summary.json ]] || fail "analyze without --output wrote no tables into DIR"
fi
((failures == 0)) && echo "capture CLI: all checks passed"
exit $((failures > 0))
