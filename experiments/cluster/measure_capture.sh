#!/usr/bin/env bash
# measure_capture.sh: the wire against dtbench's counters, the capture's own cost, and burstiness, on
# the emulated cluster (docs/wire.md; the tables of docs/benchmarks-history.md, "The wire").
#
#   eval "$(experiments/cluster/cluster.sh env)"      # a cluster that is up, with at least 3 nodes
#   experiments/cluster/measure_capture.sh DTBENCH OUT [--part reconcile|overhead|burst|all]
#       [--size 4M] [--repeats 3] [--model mobilenetv2] [--batches "8 32"] [--steps 8]
#
# reconcile  every backend x topology at 3 nodes, one rank each: one capture around one
#            `dtbench allreduce` (one size, 1 warm-up, 3 timed) with --message-log, analysed; then
#            OUT/reconcile.md: per run the wire's TCP payload, the share attributed, the gradient
#            pairs and their largest error, framing bytes per operation, setup, store, launcher bytes.
# overhead   a short 2-node training run (gloo ring) with and without capture, alternating, REPEATS
#            times each; OUT/overhead.md: median step time of each run (batches.csv, steps after the
#            first), and the medians of both groups.
# burst      training runs over 3 nodes (gloo) for ring, tree and hierarchical at every batch size,
#            captured; OUT/burst.md: `dtbench report --table burstiness` of them (the whole capture:
#            start-up included), OUT/burst_steps.md: the same ratios over the span of the run's counted
#            traffic (first to last 10 ms bin of traffic_timeline.csv), beside the counted ones.
# Runs one after another (the links are the thing measured). Root (cluster.sh capture).
# shellcheck source=measure_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure_common.sh"
part=all size=4M repeats=3 model=mobilenetv2 batches="8 32" steps=8
measure_start "[--part reconcile|overhead|burst|all] [--size S] [--repeats N] [--model M] [--batches 'B...'] [--steps N]" \
  "--part=part --size=size --repeats=repeats --model=model --batches=batches --steps=steps" "$@"
measure_need_cluster
mkdir -p "$out"
out=$(cd "$out" && pwd)
port=$((23000 + $$ % 4000))

# run_captured DIR NODES SRUN_ARGS... -- DTBENCH_ARGS...: a capture around one launch, then analyze.
run_captured() {
  local dir=$1 nodes=$2; shift 2
  local srun_args=()
  while [[ $1 != -- ]]; do srun_args+=("$1"); shift; done
  shift
  [[ -s $dir/wire_summary.json ]] && return 0  # measured already
  rm -rf "$dir"
  port=$((port + 1))
  cluster capture start "$dir" >/dev/null
  MASTER_ADDR=node1 MASTER_PORT=$port srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node=1 --cpus-per-task=1 \
    "${srun_args[@]}" "$dtbench" "$@" --message-log "$dir/messages" >"$dir.log" 2>&1 ||
    { cluster capture stop >/dev/null 2>&1 || true; echo "  failed: see $dir.log" >&2; return 1; }
  cluster capture stop >/dev/null || echo "  capture stop reported a problem (drops?): see $dir/*.capture.json" >&2
  "$dtbench" capture analyze "$dir" --messages "$dir/messages" >>"$dir.log" 2>&1 || { echo "  analyze failed: see $dir.log" >&2; return 1; }
}

train_flags() {  # BATCH
  echo --model "$model" --dataset synthetic --synthetic-train-size $((steps * $1 * 3)) --synthetic-test-size 8 \
    --batch-size "$1" --epochs 1 --max-steps "$steps" --threads 1 --workers 1 --no-eval --quiet --timeout 300
}

if [[ $part == all || $part == reconcile ]]; then
  for backend in gloo mpi; do
    mpi=()
    [[ $backend == mpi ]] && mpi=(--mpi=pmix)
    for topology in native ring tree star clique binary-tree-star hierarchical; do
      log "reconcile: $backend $topology"
      run_captured "$out/reconcile/$backend-$topology" 3 "${mpi[@]}" -- allreduce --backend "$backend" --topology "$topology" \
        -b "$size" -e "$size" --warmup-iters 1 --iters 3 --timeout 300 || true
    done
  done
  /usr/bin/python3 - "$out" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
lines = ["| backend | topology | wire TCP payload (B) | attributed | gradient pairs | largest gradient error | framing B per operation (gradients, mean) | setup B | store B | launcher B | control B | buffers B |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for d in sorted(glob.glob(f"{out}/reconcile/*")):
    if not os.path.isdir(d) or not os.path.exists(f"{d}/wire_summary.json"):
        continue
    backend, topology = os.path.basename(d).split("-", 1)
    s = json.load(open(f"{d}/wire_summary.json"))["reconciliation"]
    rows = list(csv.DictReader(open(f"{d}/reconciliation.csv")))
    by = lambda c: sum(int(r["wire_bytes"]) for r in rows if r["category"] == c)
    framing = [f["bytes_per_message"] for f in s["framing"] if f["category"] == "gradients"]
    fr = f"{sum(framing) / len(framing):.1f}" if framing else "-"
    err = f"{s['max_gradient_error_pct']:.3f} %" if s["gradient_pairs"] else "- (no counted p2p bytes)"
    lines.append(f"| {backend} | {topology} | {s['wire_payload_bytes']} | {100 * s['attributed_fraction']:.3f} % | {s['gradient_pairs']} | {err} | {fr} | "
                 f"{by('setup')} | {by('store')} | {by('launcher')} | {by('control')} | {by('buffers')} |")
open(f"{out}/reconcile.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
fi

if [[ $part == all || $part == overhead ]]; then
  # shellcheck disable=SC2207
  flags=($(train_flags 8))
  for ((i = 1; i <= repeats; i++)); do
    for mode in without with; do
      dir=$out/overhead/$mode-$i
      [[ -s $dir/run/summary.json ]] && continue
      rm -rf "$dir"; mkdir -p "$dir"
      port=$((port + 1))
      log "overhead: $mode capture, repeat $i"
      if [[ $mode == with ]]; then cluster capture start "$dir/wire" >/dev/null; fi
      MASTER_ADDR=node1 MASTER_PORT=$port srun -w "node[1-2]" -N 2 --ntasks-per-node=1 --cpus-per-task=1 \
        "$dtbench" train "${flags[@]}" --backend gloo --topology ring --out "$dir/run" >"$dir.log" 2>&1 || echo "  failed: see $dir.log" >&2
      if [[ $mode == with ]]; then cluster capture stop >/dev/null || true; fi
    done
  done
  /usr/bin/python3 - "$out" <<'PY'
import csv, glob, os, statistics, sys
out = sys.argv[1]
def median_step(run):
    rows = [r for r in csv.DictReader(open(f"{run}/batches.csv")) if r["rank"] == "0"]
    return statistics.median(float(r["step_s"]) for r in rows[1:])
groups = {"without": [], "with": []}
lines = ["| repeat | without capture: median step (s) | with capture: median step (s) |", "|---:|---:|---:|"]
i = 1
while os.path.exists(f"{out}/overhead/without-{i}"):
    vals = []
    for mode in ("without", "with"):
        run = f"{out}/overhead/{mode}-{i}/run"
        v = median_step(run) if os.path.exists(f"{run}/batches.csv") else None
        if v is not None:
            groups[mode].append(v)
        vals.append(f"{v:.4f}" if v is not None else "failed")
    lines.append(f"| {i} | {vals[0]} | {vals[1]} |")
    i += 1
if groups["without"] and groups["with"]:
    a, b = statistics.median(groups["without"]), statistics.median(groups["with"])
    lines.append(f"| median | {a:.4f} | {b:.4f} ({100 * (b / a - 1):+.1f} %) |")
open(f"{out}/overhead.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
fi

if [[ $part == all || $part == burst ]]; then
  runs=()
  for topology in ring tree hierarchical; do
    for batch in $batches; do
      dir=$out/burst/$topology-b$batch
      log "burst: $topology batch $batch"
      # shellcheck disable=SC2207
      flags=($(train_flags "$batch"))
      if [[ ! -s $dir/run/wire/wire_summary.json ]]; then
        rm -rf "$dir"; mkdir -p "$dir"
        port=$((port + 1))
        cluster capture start "$dir/capture" >/dev/null
        MASTER_ADDR=node1 MASTER_PORT=$port srun -w "node[1-3]" -N 3 --ntasks-per-node=1 --cpus-per-task=1 \
          "$dtbench" train "${flags[@]}" --backend gloo --topology "$topology" --out "$dir/run" \
          --message-log "$dir/capture/messages" >"$dir.log" 2>&1 || echo "  failed: see $dir.log" >&2
        cluster capture stop >/dev/null || true
        "$dtbench" capture analyze "$dir/capture" --messages "$dir/capture/messages" --output "$dir/run/wire" >>"$dir.log" 2>&1 ||
          echo "  analyze failed: see $dir.log" >&2
      fi
      runs+=("$dir/run")
    done
  done
  "$dtbench" report "${runs[@]}" --table burstiness --format md >"$out/burst.md" 2>"$out/burst.err" || cat "$out/burst.err" >&2
  cat "$out/burst.md"
  # The same peak-to-mean ratios over the training only: from the first to the last 10 ms bin of the
  # run's counted traffic (traffic_timeline.csv), so start-up and rendezvous do not dilute the mean.
  /usr/bin/python3 - "$out" "${runs[@]}" <<'PY'
import collections, csv, json, os, sys
out, runs = sys.argv[1], sys.argv[2:]
lines = ["| run | link | direction | window (s) | mean (Mbit/s) | peak/mean 1 ms | 5 ms | 10 ms | counted peak/mean 10 ms |",
         "|---|---|---|---:|---:|---:|---:|---:|---:|"]
for run in runs:
    tl = os.path.join(run, "traffic_timeline.csv")
    if not os.path.exists(tl) or not os.path.exists(os.path.join(run, "wire", "wire_links.csv")):
        continue
    timeline = list(csv.DictReader(open(tl)))
    if not timeline:
        continue
    hosts = json.load(open(os.path.join(run, "config.json")))["hosts"]
    t0 = min(float(r["t_start_s"]) for r in timeline)
    t1 = max(float(r["t_start_s"]) for r in timeline) + 0.01
    counted = collections.defaultdict(lambda: collections.Counter())
    for r in timeline:
        s, d = hosts[int(r["src"])], hosts[int(r["dst"])]
        if s != d:
            counted[(s, "up")][r["t_start_s"]] += int(r["bytes"])
            counted[(d, "down")][r["t_start_s"]] += int(r["bytes"])
    bins = collections.defaultdict(lambda: collections.defaultdict(int))
    for r in csv.DictReader(open(os.path.join(run, "wire", "wire_links.csv"))):
        t = float(r["t_start_s"])
        if r["direction"] == "local" or t < t0 - 1e-9 or t >= t1 - 1e-9:
            continue
        bins[(r["link"], r["direction"])][int(r["bin_ms"])] = max(bins[(r["link"], r["direction"])][int(r["bin_ms"])], int(r["frame_bytes"]))
        bins[(r["link"], r["direction"])][("sum", int(r["bin_ms"]))] += int(r["frame_bytes"])
    name = os.path.basename(os.path.dirname(run))
    for (link, direction), b in sorted(bins.items()):
        window = t1 - t0
        mean = b[("sum", 10)] / window
        ratio = lambda w: f"{(b[w] / (w / 1000)) / mean:.2f}" if mean > 0 and b[w] else "-"
        c = counted.get((link, direction))
        cr = "-"
        if c:
            cm = sum(c.values()) / window
            cr = f"{(max(c.values()) / 0.01) / cm:.2f}" if cm > 0 else "-"
        lines.append(f"| {name} | {link} | {direction} | {window:.2f} | {mean * 8 / 1e6:.1f} | {ratio(1)} | {ratio(5)} | {ratio(10)} | {cr} |")
open(os.path.join(out, "burst_steps.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
fi
