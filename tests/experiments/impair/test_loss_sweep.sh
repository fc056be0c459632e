#!/usr/bin/env bash
# Real network impairment end to end (experiments/impair/): two dtbench ranks in two network
# namespaces on a bridge, gloo over real TCP, a very short lenet run at 0 % and at 5 % packet loss.
# Passes when: the sweep exits 0; slowdown.csv has both rows with status completed, a positive
# epoch time and a positive slowdown (no speed relation is asserted: too noisy to be a test);
# rank 0's config.json names the namespace's veth as gloo's interface; the nftables rulesets
# captured in every namespace after each run, before teardown (impairment.json), hold no drop rule
# at 0 % and exactly one drop rule per namespace at 5 % whose counter dropped > 0 packets in all;
# and nothing of the run's prefix is left (namespaces, veths, bridge, nft tables). With --capture,
# the packets seen on the senders' veths show more retransmissions at 5 % (each data packet the
# receiver's rule dropped is sent again) than at 0 % (where only reordering between the cores' queues
# makes a few early resends), each of one kind. Also checks the
# refusals: not root, and a loss finer than the rule's 0.01 % resolution.
# Needs root (CI runs it as root); as another user it says why and exits 1.
# Usage: impair_test.sh DTBENCH
set -euo pipefail
dtbench=${1:?usage: impair_test.sh path/to/dtbench}
here=$(cd "$(dirname "$0")" && pwd)
sweep=$here/../../../experiments/impair/loss_sweep.sh
fail() { echo "impair_test: FAIL: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] ||
  fail "must run as root: it creates network namespaces, a bridge, veths and nftables rules (CI runs it as root)"
for tool in ip nft tc; do
  command -v "$tool" >/dev/null || fail "'$tool' not found; install the Debian packages iproute2 and nftables"
done
[[ -x $dtbench ]] || fail "dtbench binary '$dtbench' is not executable"
[[ -x $sweep ]] || fail "$sweep is missing or not executable"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# Refusals, before anything is built.
if command -v setpriv >/dev/null; then
  rc=0
  setpriv --reuid=65534 --regid=65534 --clear-groups "$sweep" --out "$tmp/nobody" >"$tmp/nobody.log" 2>&1 || rc=$?
  [[ $rc -eq 1 ]] && grep -q "must run as root" "$tmp/nobody.log" ||
    fail "as a non-root user the sweep should exit 1 saying it must run as root; got exit $rc: $(cat "$tmp/nobody.log")"
fi
rc=0
"$sweep" --losses 0,0.005 --dtbench "$dtbench" --out "$tmp/bad" >"$tmp/bad.log" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && grep -q "resolution is 0.01 %" "$tmp/bad.log" ||
  fail "--losses 0,0.005 should be refused (exit 2, 0.01 % resolution); got exit $rc: $(cat "$tmp/bad.log")"

# The sweep: 0 % and 5 %.
rc=0
"$sweep" --ranks 2 --losses 0,5 --dtbench "$dtbench" --out "$tmp/sweep" --run-timeout 40 --capture -- \
  --model lenet --dataset synthetic --synthetic-train-size 512 --synthetic-test-size 100 --lr 0.02 \
  --epochs 1 --max-steps 6 --batch-size 16 --threads 1 --workers 0 --no-eval --quiet --timeout 30 \
  >"$tmp/sweep.log" 2>&1 || rc=$?
cat "$tmp/sweep.log"
prefix=$(sed -n 's/.*world prefix \(dtb[0-9]*\) .*/\1/p' "$tmp/sweep.log" | head -n 1)
[[ -n $prefix ]] || fail "the sweep did not print its world prefix"

# Nothing of the prefix is left, whatever else happened.
left=$( { ip netns list | awk '{print $1}'; ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'
          nft list tables | awk '{print $NF}'; } | grep -E "^${prefix}(ns[0-9]+|br|h[0-9]+|v[0-9]+|loss)\$" || true)
[[ -z $left ]] || fail "left behind after the sweep: $(tr '\n' ' ' <<<"$left")"
[[ $rc -eq 0 ]] || fail "loss_sweep.sh exited $rc (rank logs: see above; they are in the sweep's logs/)"

/usr/bin/python3 - "$tmp/sweep" "$prefix" <<'PY'
import csv, json, os, re, sys
out, prefix = sys.argv[1], sys.argv[2]
failures = []
rows = {r["loss_pct"]: r for r in csv.DictReader(open(os.path.join(out, "slowdown.csv")))}
if sorted(rows) != ["0", "5"]:
    failures.append(f"slowdown.csv should have rows for 0 and 5 % loss, has {sorted(rows)}")
for loss, row in rows.items():
    if row["status"] != "completed":
        failures.append(f"{loss} %: status {row['status']} ({row['error']}), expected completed")
    for column in ("epoch_time_s", "slowdown", "wall_s"):
        try:
            ok = float(row[column]) > 0
        except ValueError:
            ok = False
        if not ok:
            failures.append(f"{loss} %: {column} '{row[column]}' is not a positive number")
if "| 5 | completed |" not in open(os.path.join(out, "slowdown.md")).read():
    failures.append("slowdown.md has no completed 5 % row")

def ruleset_counts(run_dir):
    """(drop rules per namespace, packets their counters dropped) read from the raw rulesets."""
    record = json.load(open(os.path.join(out, run_dir, "impairment.json")))
    rules, dropped = [], 0
    for rank in record["ranks"]:
        lines = [l for l in rank["nft_ruleset"].splitlines() if re.search(r"numgen random mod 10000 < \d+ .*drop", l)]
        rules.append(len(lines))
        dropped += sum(int(m) for l in lines for m in re.findall(r"counter packets (\d+)", l))
    return record, rules, dropped

record, rules, dropped = ruleset_counts("loss-0pct")
if rules != [0, 0] or dropped != 0:
    failures.append(f"0 %: expected no drop rule in either namespace, found {rules} rules, {dropped} drops")
record, rules, dropped = ruleset_counts("loss-5pct")
if rules != [1, 1]:
    failures.append(f"5 %: expected one drop rule per namespace, found {rules}")
if record["ranks"][0]["nft_ruleset"].count("< 500 ") != 1:
    failures.append("5 %: the drop rule should read 'numgen random mod 10000 < 500'")
if dropped <= 0:
    failures.append(f"5 %: the drop rules' counters dropped {dropped} packets; the loss was not applied")
if [r.get("tcp_congestion_control") for r in record["ranks"]] != ["cubic", "cubic"]:
    failures.append("5 %: every namespace should run cubic (netns_world's default, not the host's), impairment.json "
                    f"records {[r.get('tcp_congestion_control') for r in record['ranks']]}")
if record["method"] != "nftables numgen drop on input, tc tbf" or record["loss_pct"] != 5:
    failures.append(f"5 %: impairment.json records {record['method']!r} at {record['loss_pct']} %")
config = json.load(open(os.path.join(out, "loss-5pct", "config.json")))
if config.get("world_size") != 2 or config.get("gloo_iface") != prefix + "v0":
    failures.append(f"config.json: world_size {config.get('world_size')}, gloo_iface {config.get('gloo_iface')!r}; "
                    f"expected 2 and {prefix}v0")
print(f"impair_test: 5 % loss dropped {dropped} packets over the run")
for loss, row in rows.items():
    if not os.path.exists(os.path.join(out, f"loss-{loss}pct", "wire", "wire_flows.csv")):
        failures.append(f"{loss} %: --capture wrote no wire tables")
def resent(row):
    """(all, sum of the kinds) retransmissions on the wire, or None."""
    try:
        return int(row["retransmitted_packets"]), sum(int(row[k]) for k in ("fast_retransmits", "probe_retransmits", "timeout_retransmits"))
    except (KeyError, ValueError):
        return None
zero, five = rows.get("0", {}), rows.get("5", {})
r0, r5 = resent(zero), resent(five)
if r0 is None or r5 is None:
    failures.append(f"retransmission columns missing or not numbers: 0 % {r0}, 5 % {r5}")
else:
    for loss, (total, kinds) in (("0", r0), ("5", r5)):
        if total != kinds:
            failures.append(f"{loss} %: {total} retransmissions but {kinds} by kind")
    # Reordering between the two cores' queues makes a few early resends even without loss; the
    # rule's drops make many more (each lost data segment is sent again).
    if r5[0] <= r0[0]:
        failures.append(f"5 %: {r5[0]} retransmissions on the wire, not more than at 0 % ({r0[0]})")
print(f"impair_test: retransmissions on the wire: {zero.get('retransmitted_packets')} at 0 %, "
      f"{five.get('retransmitted_packets')} at 5 % ({five.get('fast_retransmits')} fast, {five.get('probe_retransmits')} "
      f"early timers, {five.get('timeout_retransmits')} timeouts)")
for f in failures:
    print("impair_test: FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
PY

echo "impair_test: passed in $(($(date +%s) - start)) s"
