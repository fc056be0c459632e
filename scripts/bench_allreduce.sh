#!/usr/bin/env bash
# The "Communication" figures of docs/benchmarks-history.md: all-reduce latency and busbw of every backend x
# topology (dtbench allreduce), side by side in one run with raw MPI_Allreduce and MPI_Iallreduce
# (mpi_allreduce_reference.c, compiled here with mpicc) and torch.distributed Gloo from Python
# (gloo_allreduce_reference.py). float32, 4 B .. 64 MB (x4). Each configuration runs REPEATS times;
# the summary gives the median and the spread (min-max) over the repeats, and the ratios the issue's
# goals are stated in.
# CPU binding: none anywhere (mpirun --bind-to none; dtbench launch never binds), one intra-op
# thread per rank. At 2 ranks no --oversubscribe: it turns on Open MPI's mpi_yield_when_idle, with
# which a blocking MPI_Allreduce of 2 unbound ranks on 2 cores took ~16 ms per call at every size
# (measured 2026-11-21). More ranks than cores need it (and then every MPI column yields).
# Usage: scripts/bench_allreduce.sh [build-dir] [repeats] [out-dir] [world-size]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-5}
out=${3:-$build/bench-allreduce}
world=${4:-2}
dtbench=$build/dtbench
mkdir -p "$out"
min=4 max=$((64 << 20)) factor=4 warmup=5 iters=20
mpicc -O2 -o "$out/mpi_allreduce_reference" scripts/mpi_allreduce_reference.c
mpirun_=(mpirun --allow-run-as-root --bind-to none -np "$world")
if (( world > $(nproc) )); then mpirun_+=(--oversubscribe); fi
# dtbench sets this for its own MPI_Iallreduce (comm/backends/mpi_communicator.cpp); the raw reference gets the same.
libnbc=(-x OMPI_MCA_coll_libnbc_iallreduce_algorithm=3)
sweep=(--min-bytes $min --max-bytes $max --factor $factor --warmup-iters $warmup --iters $iters --threads 1)

for rep in $(seq 1 "$repeats"); do
  "$dtbench" launch -n "$world" -- "$dtbench" allreduce --backend gloo --topology all "${sweep[@]}" \
    --csv "$out/dtbench_gloo.$rep.csv" >/dev/null
  "${mpirun_[@]}" "$dtbench" allreduce --backend mpi --topology all "${sweep[@]}" \
    --csv "$out/dtbench_mpi.$rep.csv" >/dev/null
  # The other side of each topology's default segment (comm/topology/registry.h, defaultSegmentBytes).
  "${mpirun_[@]}" "$dtbench" allreduce --backend mpi --topology ring --segment-bytes 1M "${sweep[@]}" \
    --csv "$out/dtbench_mpi_seg1M.$rep.csv" >/dev/null
  "${mpirun_[@]}" "$dtbench" allreduce --backend mpi --topology tree --segment-bytes 0 "${sweep[@]}" \
    --csv "$out/dtbench_mpi_seg0.$rep.csv" >/dev/null
  "${mpirun_[@]}" "$out/mpi_allreduce_reference" $min $max $factor $warmup $iters allreduce >"$out/raw_mpi.$rep.csv"
  "${mpirun_[@]}" "${libnbc[@]}" "$out/mpi_allreduce_reference" $min $max $factor $warmup $iters iallreduce \
    >"$out/raw_impi.$rep.csv"
  "$dtbench" launch -n "$world" -- scripts/torch_python scripts/gloo_allreduce_reference.py $min $max $factor $warmup $iters \
    | sed 's/^\[0\] //' | grep -v '^\[' >"$out/python_gloo.$rep.csv"
  echo "repeat $rep of $repeats done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

/usr/bin/python3 - "$out" "$repeats" "$world" <<'PY'
import csv, glob, statistics, sys
out, repeats, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
busbw, time = {}, {}  # label -> size -> [values]
def add(label, row):
    size = int(row["size"])
    busbw.setdefault(label, {}).setdefault(size, []).append(float(row["busbw_gbps"]))
    time.setdefault(label, {}).setdefault(size, []).append(float(row["time_us"]))
topologies = []  # in the order `dtbench allreduce --topology all` ran them: its table (comm/topology/registry.cpp)
for path in sorted(glob.glob(f"{out}/dtbench_*.*.csv")):
    variant = " (1 MiB segments)" if "_seg1M." in path else " (whole chunks)" if "_seg0." in path else ""
    for row in csv.DictReader(open(path)):
        add(f"{row['topology']} {row['backend']}{variant}", row)
        if not variant and row["topology"] not in topologies:
            topologies.append(row["topology"])
for kind, label in (("raw_mpi", "raw MPI_Allreduce"), ("raw_impi", "raw MPI_Iallreduce"),
                    ("python_gloo", "torch.distributed gloo")):
    for path in glob.glob(f"{out}/{kind}.*.csv"):
        for row in csv.DictReader(open(path)):
            add(label, row)
def name(s):
    return f"{s >> 20} MB" if s >= 1 << 20 else f"{s >> 10} KB" if s >= 1 << 10 else f"{s} B"
def cell(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" if v else "-"
def med(series, label, size):
    v = series.get(label, {}).get(size)
    return statistics.median(v) if v else float("nan")
def table(title, labels, series, sizes, unit):
    labels = [l for l in labels if l in series]
    print(f"\n### {title}\n")
    print("| size | " + " | ".join(labels) + " |")
    print("|---:|" + "---:|" * len(labels))
    for s in sizes:
        print(f"| {name(s)} | " + " | ".join(cell(series[l].get(s, [])) for l in labels) + " |")
    print(f"\n{unit}: median (min-max) over {repeats} runs, {world} ranks.")
sizes = sorted({s for l in busbw for s in busbw[l]})
big = [s for s in sizes if s >= 4096]
small = [s for s in sizes if s <= 4096]
refs = ["raw MPI_Allreduce", "raw MPI_Iallreduce", "torch.distributed gloo"]
point_to_point = [t for t in topologies if t != "native"]
table("Latency of small all-reduces", [f"native {b}" for b in ("mpi", "gloo")] + refs + ["ring mpi", "ring gloo"],
      time, small, "time per all-reduce in µs")
table("Native all-reduces and references", ["native mpi", "raw MPI_Allreduce", "raw MPI_Iallreduce", "native gloo",
      "torch.distributed gloo"], busbw, big, "busbw in GB/s")
table("Topologies over MPI point-to-point", [f"{t} mpi" for t in point_to_point] +
      ["ring mpi (1 MiB segments)", "tree mpi (whole chunks)"],
      busbw, big, "busbw in GB/s")
table("Topologies over Gloo point-to-point", [f"{t} gloo" for t in point_to_point], busbw, big, "busbw in GB/s")
print("\n### Ratios of medians (busbw; the issue's goals)\n")
ratios = [("native mpi", "raw MPI_Allreduce"), ("native mpi", "raw MPI_Iallreduce"),
          ("native gloo", "torch.distributed gloo"), ("ring mpi", "raw MPI_Allreduce"),
          ("ring mpi (1 MiB segments)", "ring mpi"), ("tree mpi", "tree mpi (whole chunks)")]
print("| size | " + " | ".join(f"{a} / {b}" for a, b in ratios) + " |")
print("|---:|" + "---:|" * len(ratios))
for s in big:
    print(f"| {name(s)} | " + " | ".join(f"{med(busbw, a, s) / med(busbw, b, s):.2f}" for a, b in ratios) + " |")
PY
