#!/usr/bin/env bash
# dtbench allreduce on the emulated cluster: the bound and of_bound columns across two hosts.
#
# Three ranks, each under `unshare --uts` with a host name of its own: ranks 0 and 1 on node1
# (1 Gbit/s), rank 2 on node2 (100 Mbit/s), as DTBENCH_CLUSTER's cluster.json says. (The links are
# not shaped here, only named: the bound is what the file's rates allow.) 1200 float32 elements,
# S = 4800 bytes, N = 3, busbw bytes = S × 2(N−1)/N = 6400. node2's link carries, at
# P = 1e8 / 8 × 1448 / 1514 = 11,955,085.87 bytes/s:
#   ring 0->1->2->0   1->2 and 2->0 cross, each 2(N−1)/N · S = 6400 bytes: t = 6400 / P,
#                     bound = 6400 / t = P = 0.0119551 GB/s;
#   star (hub 0)      2->0 and 0->2 cross, S = 4800 each: bound = 6400 / (4800 / P) = 0.0159401 GB/s;
#   hierarchical      leaders 0 and 2, a ring of 2 chunks between them: 4800 each way, as the star;
#   native (gloo)     held to its backend's model (comm/topology/native_models.h): Gloo's ring over the
#                     ranks, as ring.
# node1's link carries the same bytes at 10× the rate, so node2 sets every bound. link_rate_bps is
# the slowest link, 100000000. Skips (exit 77) without a working `unshare --uts` and `hostname`.
# Usage: test_allreduce_cluster.sh path/to/dtbench
set -uo pipefail
dtbench=${1:?usage: test_allreduce_cluster.sh path/to/dtbench}
skip() { echo "SKIP: $*"; exit 77; }
command -v unshare >/dev/null 2>&1 || skip "'unshare' (util-linux) is not installed"
command -v hostname >/dev/null 2>&1 || skip "'hostname' is not installed"
uts=(unshare --uts)
[[ $(id -u) -eq 0 ]] || uts=(unshare --user --map-root-user --uts)
"${uts[@]}" sh -c 'hostname dtbench-probe' 2>/dev/null || skip "'${uts[*]}' cannot set a host name here"

tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  pkill -9 -P $$ 2>/dev/null  # its children, not every pid it started: one it reaped may be another's now
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
cat >"$tmp/cluster.json" <<'EOF'
{"name": "test", "subnet": "10.78.0.0/24",
 "nodes": [{"name": "node1", "address": "10.78.0.1", "interface": "eth0", "link_rate_bps": 1000000000},
           {"name": "node2", "address": "10.78.0.2", "interface": "eth0", "link_rate_bps": 100000000}]}
EOF
hosts=(node1 node1 node2)
for rank in 0 1 2; do
  DTBENCH_CLUSTER=$tmp/cluster.json timeout 60 "${uts[@]}" sh -c 'hostname "$1" && shift && exec "$@"' sh \
    "${hosts[$rank]}" "$dtbench" allreduce --rank "$rank" --world-size 3 --store-path "$tmp/store" --gloo-iface lo \
    --topology native,ring,star,hierarchical --counts 1200 --iters 1 --warmup-iters 0 --check --timeout 30 \
    --csv "$tmp/rows.csv" --json "$tmp/rows.json" >"$tmp/rank$rank.log" 2>&1 &
  pids+=($!)
done
failures=0
for rank in 0 1 2; do
  wait "${pids[$rank]}" || { echo "FAIL: rank $rank exited with $?:"; cat "$tmp/rank$rank.log"; failures=$((failures + 1)); }
done
pids=()
[[ $failures -eq 0 ]] || exit 1
cat "$tmp/rank0.log"
grep -q "^# cluster $tmp/cluster.json: links node1 1 Gbit/s, node2 100 Mbit/s; bound = " "$tmp/rank0.log" ||
  { echo "FAIL: no cluster line"; failures=$((failures + 1)); }
/usr/bin/python3 - "$tmp/rows.csv" "$tmp/rows.json" <<'EOF' || failures=$((failures + 1))
import csv, json, sys
P = 1e8 / 8 * 1448 / 1514 / 1e9  # GB/s
want = {"native": P, "ring": P, "star": 6400 / 4800 * P, "hierarchical": 6400 / 4800 * P}
# The defaults across hosts: about 1 ms of the slowest link, 12,500 bytes = 2^13.6 -> 16 KiB
# (comm::crossHostSegmentBytes).
segment = {"native": None, "ring": 16 << 10, "star": 16 << 10, "hierarchical": 16 << 10}
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted(r["topology"] for r in rows) == sorted(want), rows
for r in rows:
    assert r["wrong"] == "0", r
    assert r["nodes"] == "2", r  # node1 and node2
    assert r["segment_bytes"] == ("" if segment[r["topology"]] is None else str(segment[r["topology"]])), r
    assert r["link_rate_bps"] == "100000000", r
    bound = float(r["bound_busbw_gbps"])
    assert abs(bound - want[r["topology"]]) < 1e-5 * want[r["topology"]], (r, want[r["topology"]])
    assert abs(float(r["of_bound"]) - float(r["busbw_gbps"]) / bound) < 1e-5 * float(r["of_bound"]), r
for r in json.load(open(sys.argv[2])):
    assert r["link_rate_bps"] == 100000000, r
    assert r["nodes"] == 2 and r["segment_bytes"] == segment[r["topology"]], r
    assert abs(r["bound_busbw_gbps"] - want[r["topology"]]) < 1e-12, r
    assert abs(r["of_bound"] - r["busbw_gbps"] / r["bound_busbw_gbps"]) < 1e-12, r
print("bounds as worked by hand:", {t: round(b, 7) for t, b in want.items()})
EOF

# A rank that sees no DTBENCH_CLUSTER would cut the tensors into other segments: every rank refuses
# to start, with exit 2 and a message naming each rank's rate.
for rank in 0 1 2; do
  cluster=$tmp/cluster.json
  [[ $rank -eq 2 ]] && cluster=
  DTBENCH_CLUSTER=$cluster timeout 60 "${uts[@]}" sh -c 'hostname "$1" && shift && exec "$@"' sh \
    "${hosts[$rank]}" "$dtbench" allreduce --rank "$rank" --world-size 3 --store-path "$tmp/store2" --gloo-iface lo \
    --topology ring --counts 1200 --iters 1 --warmup-iters 0 --timeout 30 >"$tmp/disagree$rank.log" 2>&1 &
  pids+=($!)
done
for rank in 0 1 2; do
  wait "${pids[$rank]}"
  code=$?
  [[ $code -eq 2 ]] || { echo "FAIL: rank $rank with another DTBENCH_CLUSTER exited with $code, not 2:"; cat "$tmp/disagree$rank.log"; failures=$((failures + 1)); }
  grep -q "different link rates .*rank 0: 100 Mbit/s; rank 1: 100 Mbit/s; rank 2: none.*DTBENCH_CLUSTER" "$tmp/disagree$rank.log" ||
    { echo "FAIL: rank $rank does not name the ranks' link rates:"; cat "$tmp/disagree$rank.log"; failures=$((failures + 1)); }
done
pids=()
[[ $failures -eq 0 ]] && echo "ok: allreduce on the cluster" || exit 1
