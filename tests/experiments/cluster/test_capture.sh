#!/bin/bash
# The wire agrees with dtbench's counters. On 3 nodes with links shaped to 200 Mbit/s, packets are
# captured on every node's link and loopback (cluster.sh capture, libpcap) while
#   - gloo and mpi (srun --mpi=pmix) all-reduce with ring, tree and hierarchical, one rank per node;
#   - gloo and mpi hierarchical over 2 nodes x 2 ranks (same-node traffic: gloo over lo, Open MPI
#     through shared memory, which no capture sees: those pairs are counted apart);
#   - a short MobileNetV2 training run (BatchNorm buffers broadcast) over 2 nodes, gloo and mpi;
# each with --message-log. Then for every capture:
#   - no packet was dropped by the capture (pcap_stats), and the pcaps open with libpcap (tcpdump
#     reads the same number of packets, when it is installed);
#   - the captured bytes equal the kernel's interface counters over the same window, on every link;
#   - at least 99 % of the TCP payload on the wire is attributed to a named category;
#   - for every directed rank pair with a connection, the wire's gradient bytes are within 2 % of the
#     bytes dtbench counted for it, and the sum over pairs of the log's gradient sends equals
#     traffic.csv's counted bytes (training runs);
#   - flows are mapped to ranks: every backend flow names two different ranks.
#   tests/experiments/cluster/test_capture.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
export DTBENCH
cluster_up --nodes 3 --rate 200mbit --cpus 2 --gpus 0
cd "$work" || fail "cd $work"

port=$((21000 + $$ % 5000))
# captured NAME NODES PER_NODE SRUN_ARGS... -- DTBENCH_ARGS...: one capture around one launch.
captured() {
  local name=$1 nodes=$2 per_node=$3; shift 3
  local srun_args=()
  while [[ $1 != -- ]]; do srun_args+=("$1"); shift; done
  shift
  port=$((port + 1))
  info "$name: $nodes node(s) x $per_node rank(s)"
  cluster capture start "$work/$name" >"$work/$name.capture.out" 2>&1 || fail "$name: capture start: $(cat "$work/$name.capture.out")"
  MASTER_ADDR=node1 MASTER_PORT=$port timeout 240 srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node="$per_node" \
    --cpus-per-task=1 "${srun_args[@]}" "$DTBENCH" "$@" --message-log "$work/$name/messages" >"$work/$name.out" 2>&1 ||
    { cluster capture stop >/dev/null 2>&1; fail "$name: dtbench failed: $(tail -n 5 "$work/$name.out")"; }
  cluster capture stop >>"$work/$name.capture.out" 2>&1 || fail "$name: capture stop: $(cat "$work/$name.capture.out")"
  "$DTBENCH" capture analyze "$work/$name" --messages "$work/$name/messages" --keep-pcap >"$work/$name.analyze.out" 2>&1 ||
    fail "$name: capture analyze: $(tail -n 5 "$work/$name.analyze.out")"
}

allreduce=(allreduce --topology ring,tree,hierarchical -b 1M -e 2M -f 2 --warmup-iters 1 --iters 2 --timeout 120)
train=(train --model mobilenetv2 --dataset synthetic --synthetic-train-size 64 --synthetic-test-size 8 --batch-size 8
       --epochs 1 --max-steps 3 --threads 1 --workers 1 --no-eval --quiet --timeout 120 --topology ring)
captured gloo-allreduce 3 1 -- "${allreduce[@]}" --backend gloo
captured mpi-allreduce 3 1 --mpi=pmix -- "${allreduce[@]}" --backend mpi
captured gloo-hierarchical 2 2 -- allreduce --topology hierarchical -b 1M -e 1M --warmup-iters 1 --iters 2 --timeout 120 --backend gloo
captured mpi-hierarchical 2 2 --mpi=pmix -- allreduce --topology hierarchical -b 1M -e 1M --warmup-iters 1 --iters 2 --timeout 120 --backend mpi
captured gloo-train 2 1 -- "${train[@]}" --backend gloo --out "$work/gloo-train/run"
captured mpi-train 2 1 --mpi=pmix -- "${train[@]}" --backend mpi --out "$work/mpi-train/run"

/usr/bin/python3 - "$work" <<'PY' || fail "the wire and dtbench's counters disagree (above)"
import csv, glob, json, os, shutil, subprocess, sys
work = sys.argv[1]
problems = []
def check(cond, what):
    if not cond:
        problems.append(what)
for name in ("gloo-allreduce", "mpi-allreduce", "gloo-hierarchical", "mpi-hierarchical", "gloo-train", "mpi-train"):
    d = f"{work}/{name}"
    summary = json.load(open(f"{d}/wire_summary.json"))
    # capture completeness and the independent count
    for point in summary["capture_points"]:
        where = f"{name} {point['node']}:{point['interface']}"
        stats, count = point["pcap_stats"], point["count_check"]
        check(stats["pcap_dropped"] == 0 and stats["interface_dropped"] == 0,
              f"{where}: pcap dropped {stats['pcap_dropped']} packets, the interface {stats['interface_dropped']}")
        check(count["bytes_consistent"] and count["frames_consistent"],
              f"{where}: captured {count['captured_frames']} frames / {count['captured_bytes']} B "
              f"({count['edge_frames']} / {count['edge_bytes']} B at the window's edges), interface counters "
              f"{count['counter_packets']} / {count['counter_bytes']} B ({count['counters']})")
        pcap = f"{d}/{point['pcap']}"
        check(os.path.getsize(pcap) >= 24, f"{where}: {pcap} has no pcap header")
        if shutil.which("tcpdump"):
            out = subprocess.run(["tcpdump", "-nr", pcap], capture_output=True, text=True)
            n = len([l for l in out.stdout.splitlines() if l.strip()])
            check(out.returncode == 0 and n == stats["packets_captured"],
                  f"{where}: tcpdump read {n} packets (rc {out.returncode}), the capture wrote {stats['packets_captured']}")
    check(summary["complete"], f"{name}: capture incomplete: {summary['warnings']}")
    rec = summary["reconciliation"]
    check(rec["attributed_fraction"] >= 0.99, f"{name}: only {rec['attributed_fraction']:.4f} of the wire's payload attributed")
    check(rec["gradient_pairs"] >= 2, f"{name}: {rec['gradient_pairs']} rank pairs with gradients on the wire")
    check(rec["max_gradient_error_pct"] <= 2.0, f"{name}: a pair's gradient bytes differ by {rec['max_gradient_error_pct']:.3f} % from the counted")
    flows = list(csv.DictReader(open(f"{d}/wire_flows.csv")))
    backend = [f for f in flows if f["class"] == "backend"]
    check(backend, f"{name}: no backend flow")
    for f in backend:
        check(int(f["src_rank"]) >= 0 and int(f["dst_rank"]) >= 0 and f["src_rank"] != f["dst_rank"],
              f"{name}: backend flow {f['flow']} maps to ranks {f['src_rank']} -> {f['dst_rank']}")
    rows = list(csv.DictReader(open(f"{d}/reconciliation.csv")))
    for r in rows:
        if r["category"] == "gradients" and int(r["counted_bytes"]) > 0:
            print(f"{name}: {r['src_rank']}->{r['dst_rank']} gradients counted {r['counted_bytes']} wire {r['wire_bytes']} ({r['difference_pct']} %)")
    if os.path.exists(f"{d}/run/traffic.csv"):
        counted = sum(int(r["bytes"]) for r in csv.DictReader(open(f"{d}/run/traffic.csv")) if r["kind"] == "counted")
        logged = sum(int(r["counted_bytes"]) for r in rows if r["category"] == "gradients")
        check(counted == logged, f"{name}: traffic.csv counts {counted} B, the message log's gradient sends {logged} B")
    if name.endswith("train"):
        check(any(r["category"] == "buffers" and int(r["wire_bytes"]) > 0 for r in rows), f"{name}: no BatchNorm broadcast on the wire")
    if name == "gloo-hierarchical":
        check(any(p["interface"] == "lo" and p["frame_bytes_read"] > 0 for p in summary["capture_points"]),
              f"{name}: nothing captured on lo with two ranks per node")
        check(rec["gradient_pairs_without_connection"] == 0, f"{name}: gloo pairs without a connection: {rec}")
    if name == "mpi-hierarchical":
        # ranks 0,1 on node1 and 2,3 on node2: the same-node pairs send through shared memory
        same_node = [(r["src_rank"], r["dst_rank"]) for r in rows if r["category"] == "gradients" and
                     int(r["counted_bytes"]) > 0 and r["src_host"] == r["dst_host"]]
        check(same_node and all(int(r["wire_bytes"]) == 0 for r in rows if (r["src_rank"], r["dst_rank"]) in same_node
                                and r["category"] == "gradients"),
              f"{name}: same-node pairs {same_node} should count gradients and carry none on any socket")
        check(rec["gradient_pairs_without_connection"] == len(same_node),
              f"{name}: {rec['gradient_pairs_without_connection']} pairs without a connection, want {len(same_node)}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
PY
echo "PASS: capture: the wire matches dtbench's counters (gloo and mpi, ring, tree, hierarchical, training)"
