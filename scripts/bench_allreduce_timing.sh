#!/usr/bin/env bash
# `dtbench allreduce --timing each` beside `--timing loop` (nccl-tests' way) on the same sizes
# (docs/benchmarks-history.md, "What dtbench allreduce measures"): 2 ranks on this machine, gloo (native and
# ring) and mpi (native), 4 KiB to 16 MiB by factors of 4, 50 timed iterations; REPEATS runs of each
# mode, alternating, and per size the median time_us of each mode and their ratio.
# Usage: scripts/bench_allreduce_timing.sh [build-dir] [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
dtbench=$(realpath "${1:-build}/dtbench")
repeats=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sizes=(-b 4K -e 16M -f 4 --iters 50 --warmup-iters 5)
for ((k = 1; k <= repeats; k++)); do
  for timing in each loop; do
    "$dtbench" launch -n 2 -- "$dtbench" allreduce --backend gloo --topology native,ring "${sizes[@]}" \
      --timing "$timing" --csv "$work/gloo-$timing-$k.csv" >/dev/null
    mpirun --allow-run-as-root --oversubscribe -np 2 "$dtbench" allreduce --backend mpi --topology native "${sizes[@]}" \
      --timing "$timing" --csv "$work/mpi-$timing-$k.csv" >/dev/null
  done
done
/usr/bin/python3 - "$work" "$repeats" <<'PY'
import csv, statistics, sys
work, repeats = sys.argv[1], int(sys.argv[2])
def medians(backend, timing):
    runs = [list(csv.DictReader(open(f"{work}/{backend}-{timing}-{k}.csv"))) for k in range(1, repeats + 1)]
    for row in runs[0]:
        assert row["timing"] == timing
    return {(r["topology"], int(r["size"])): statistics.median(float(run[i]["time_us"]) for run in runs)
            for i, r in enumerate(runs[0])}
print(f"{'backend':8} {'topology':9} {'size':>10} {'each_us':>10} {'loop_us':>10} {'loop/each':>9}")
for backend in ("gloo", "mpi"):
    each, loop = medians(backend, "each"), medians(backend, "loop")
    for (topology, size), a in each.items():
        b = loop[(topology, size)]
        print(f"{backend:8} {topology:9} {size:>10} {a:>10.1f} {b:>10.1f} {b / a:>9.2f}")
PY
