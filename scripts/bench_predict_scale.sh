#!/usr/bin/env bash
# The cost of `dtbench predict` against the world size (docs/benchmarks-history.md, "Predictions at large
# worlds"): a one-rank LeNet run on synthetic data is predicted at growing worlds, 8 ranks per node
# and 1, per topology; each line: topology, ranks per node, world, wall seconds and the peak resident
# set in MiB (GNU time's %M, from getrusage). Usage: scripts/bench_predict_scale.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
dtbench=${1:-build}/dtbench
[[ -x /usr/bin/time ]] || { echo "bench_predict_scale: needs GNU time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$dtbench" train --model lenet --dataset synthetic --synthetic-train-size 512 --synthetic-test-size 64 --batch-size 32 \
  --epochs 1 --no-eval --threads 1 --workers 0 --quiet --out "$work/run" >/dev/null
for perNode in 8 1; do
  cat >"$work/hw$perNode.json" <<JSON
{"description": "$perNode ranks per node", "ranks_per_node": $perNode,
 "intra_node": {"bandwidth_gbit_s": 400, "latency_us": 2}, "inter_node": {"bandwidth_gbit_s": 100, "latency_us": 5}}
JSON
done
printf '%-14s %8s %7s %9s %12s\n' topology per_node world seconds peak_MiB
row() {  # row TOPOLOGY PER_NODE WORLD
  local stats
  stats=$(/usr/bin/time -f '%e %M' "$dtbench" predict "$work/run" --hardware "$work/hw$2.json" --world "$3" \
    --topology "$1" --format csv --table time_speedup 2>&1 >/dev/null | tail -n 1)
  awk -v t="$1" -v k="$2" -v w="$3" '{ printf "%-14s %8s %7s %9s %12.0f\n", t, k, w, $1, $2 / 1024 }' <<<"$stats"
}
for world in 8 64 512 4096 32768 65536; do row native 8 "$world"; done
for world in 8 64 512 4096 32768 65536; do row native 1 "$world"; done
for topology in ring clique hierarchical tree star binary-tree-star; do row "$topology" 8 65536; done
