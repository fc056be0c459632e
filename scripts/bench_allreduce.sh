#!/usr/bin/env bash
# The "Communication" figures of docs/benchmarks.md: all-reduce busbw at 2 ranks, 4 KB .. 64 MB
# (x4), for native gloo, native mpi, ring over gloo and over mpi (dtbench allreduce), raw
# MPI_Allreduce (mpi_allreduce_reference.c, compiled here with mpicc) and torch.distributed Gloo
# from Python (gloo_allreduce_reference.py). Each configuration runs REPEATS times; the summary is
# the median busbw and the spread (min-max) over the repeats. CPU binding: none anywhere (mpirun
# --bind-to none; dtbench launch never binds), one intra-op thread per rank. No --oversubscribe:
# it turns on Open MPI's mpi_yield_when_idle, with which a blocking MPI_Allreduce of 2 unbound
# ranks on 2 cores took ~16 ms per call at every size (measured 2026-11-21).
# Usage: scripts/bench_allreduce.sh [build-dir] [repeats] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-5}
out=${3:-$build/bench-allreduce}
dtbench=$build/dtbench
mkdir -p "$out"
min=4096 max=$((64 << 20)) factor=4 warmup=5 iters=20
mpicc -O2 -o "$out/mpi_allreduce_reference" scripts/mpi_allreduce_reference.c
mpirun_=(mpirun --allow-run-as-root --bind-to none -np 2)
sweep=(--min-bytes $min --max-bytes $max --factor $factor --warmup-iters $warmup --iters $iters --threads 1)

for rep in $(seq 1 "$repeats"); do
  "$dtbench" launch -n 2 -- "$dtbench" allreduce --backend gloo --topology native,ring "${sweep[@]}" \
    --csv "$out/dtbench_gloo.$rep.csv" >/dev/null
  "${mpirun_[@]}" "$dtbench" allreduce --backend mpi --topology native,ring "${sweep[@]}" \
    --csv "$out/dtbench_mpi.$rep.csv" >/dev/null
  "${mpirun_[@]}" "$out/mpi_allreduce_reference" $min $max $factor $warmup $iters >"$out/raw_mpi.$rep.csv"
  "$dtbench" launch -n 2 -- /usr/bin/python3 scripts/gloo_allreduce_reference.py $min $max $factor $warmup $iters \
    | sed 's/^\[0\] //' | grep -v '^\[' >"$out/python_gloo.$rep.csv"
  echo "repeat $rep of $repeats done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

/usr/bin/python3 - "$out" "$repeats" <<'PY'
import csv, glob, statistics, sys
out, repeats = sys.argv[1], int(sys.argv[2])
series = {}  # label -> size -> [busbw]
def add(label, size, busbw):
    series.setdefault(label, {}).setdefault(int(size), []).append(float(busbw))
for path in glob.glob(f"{out}/dtbench_*.csv"):
    for row in csv.DictReader(open(path)):
        add(f"dtbench {row['topology']} {row['backend']}", row["size"], row["busbw_gbps"])
for kind, label in (("raw_mpi", "raw MPI_Allreduce"), ("python_gloo", "torch.distributed gloo")):
    for path in glob.glob(f"{out}/{kind}.*.csv"):
        for row in csv.DictReader(open(path)):
            add(label, row["size"], row["busbw_gbps"])
labels = sorted(series)
sizes = sorted({s for l in labels for s in series[l]})
print("| size | " + " | ".join(labels) + " |")
print("|---:|" + "---:|" * len(labels))
for s in sizes:
    cells = []
    for l in labels:
        v = series[l].get(s, [])
        cells.append(f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" if v else "-")
    name = f"{s >> 20} MB" if s >= 1 << 20 else f"{s >> 10} KB"
    print(f"| {name} | " + " | ".join(cells) + " |")
print(f"\nbusbw in GB/s (10^9 B/s): median (min-max) over {repeats} runs.")
PY
