#!/usr/bin/env bash
# The "Two-rank S-SGD step time" figures of docs/benchmarks-history.md: dtbench's distributed training step
# against PyTorch's DistributedDataParallel (scripts/bench_ddp.py, run by scripts/torch_python with
# the torch dtbench builds against, Gloo) on the same LibTorch. 2 local ranks, one intra-op thread each, batch 16 per
# rank, CIFAR-shaped synthetic data, SGD lr 0.1 momentum 0.9 weight decay 5e-4, bucket cap 25 MiB.
# Configurations, run in a rotating order inside each repeat:
#   ddp                  bench_ddp.py: 2 ranks of DDP over torch.distributed Gloo
#   gloo, gloo-nolap     dtbench launch -n 2 -- dtbench train --backend gloo [--no-overlap]
#   mpi, mpi-nolap       mpirun -np 2 dtbench train --backend mpi [--no-overlap]
# Every run does WARMUP + STEPS steps; the first WARMUP are left out. dtbench's figures are rank 0's
# rows of batches.csv: step_s (which includes data_s, the loader wait; --workers 1) and step_s -
# data_s (the work of DDP's step, which has no loader), comm_total_s and comm_exposed_s, overlap
# fraction = (sum total - sum exposed) / sum total. DDP's figures are rank 0's per-step wall times;
# its comm columns come from DDP's own runtime statistics (bench_ddp.py's "ddp_logging").
# Per run the median over the timed steps; the table gives the median over the repeats and the
# min-max of the per-run medians.
# BatchNorm statistics: BN=broadcast (default) is DDP's broadcast_buffers=True and dtbench's default
# (rank 0's statistics to every rank each step); BN=local is DDP(broadcast_buffers=False) and
# dtbench --local-bn-stats.
# CPU binding: none (dtbench launch never binds; mpirun --bind-to none). No --oversubscribe at 2
# ranks: it turns on Open MPI's mpi_yield_when_idle (see bench_allreduce.sh); MPIRUN_FLAGS adds
# flags. GLOO_SOCKET_IFNAME=lo for both Gloo sides. A failed run is logged and shown as failed.
# Usage: scripts/bench_distributed.sh [build-dir] [repeats] [out-dir]
#   environment: MODELS (resnet18 mobilenetv2), WARMUP (3), STEPS (20), BATCH (16), BN (broadcast),
#   CONFIGS (ddp gloo mpi gloo-nolap mpi-nolap), MPIRUN_FLAGS ()
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
out=${3:-$build/bench-distributed}
dtbench=$build/dtbench
models=(${MODELS:-resnet18 mobilenetv2})
configs=(${CONFIGS:-ddp gloo mpi gloo-nolap mpi-nolap})
warmup=${WARMUP:-3} steps=${STEPS:-20} batch=${BATCH:-16} bn=${BN:-broadcast}
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-lo}
mkdir -p "$out"
log=$out/runs.log
: >"$log"

ddp_flags=() dtbench_flags=()
case $bn in
  broadcast) ;;
  local) ddp_flags=(--no-broadcast-buffers) dtbench_flags=(--local-bn-stats) ;;
  *) echo "BN must be broadcast or local, not $bn" >&2; exit 2 ;;
esac
train=(train --dataset synthetic --synthetic-train-size $((batch * 2 * (warmup + steps))) --synthetic-test-size 0
       --no-eval --batch-size "$batch" --threads 1 --workers 1 --epochs 1 --max-steps $((warmup + steps))
       --lr 0.1 --momentum 0.9 --weight-decay 5e-4 --bucket-mb 25 --timeout 120 --quiet "${dtbench_flags[@]}")
mpirun_=(mpirun --allow-run-as-root --bind-to none ${MPIRUN_FLAGS:-} -np 2)

# run MODEL CONFIG REP: one run; its output lands in $out/MODEL.CONFIG.REP(.json).
run() {
  local model=$1 config=$2 rep=$3 dir=$out/$1.$2.$3 extra=() rc start
  rm -rf "$dir" "$dir.json"
  [[ $config == *-nolap ]] && extra=(--no-overlap)
  start=$(date +%s%N)
  case $config in
    ddp)
      timeout --kill-after=10 600 scripts/torch_python scripts/bench_ddp.py --model "$model" --world-size 2 \
        --batch-size "$batch" --warmup "$warmup" --steps "$steps" --threads 1 "${ddp_flags[@]}" \
        >"$dir.json" 2>"$dir.err" ;;
    gloo*)
      timeout --kill-after=10 600 "$dtbench" launch -n 2 -- "$dtbench" "${train[@]}" --model "$model" \
        --backend gloo "${extra[@]}" --out "$dir" >"$dir.err" 2>&1 ;;
    mpi*)
      timeout --kill-after=10 600 "${mpirun_[@]}" "$dtbench" "${train[@]}" --model "$model" \
        --backend mpi "${extra[@]}" --out "$dir" >"$dir.err" 2>&1 ;;
  esac
  rc=$?
  printf '%s %s %s rc=%s %.1fs load %s\n' "$model" "$config" "$rep" "$rc" \
    "$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { print (b - a) / 1e9 }')" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$log" >&2
  if [[ $rc != 0 ]]; then
    echo "rc=$rc" >"$dir.failed"
    tail -n 3 "$dir.err" | sed 's/^/    /' >&2
  fi
}

started=$(date -u '+%Y-%m-%d %H:%M UTC')
for rep in $(seq 1 "$repeats"); do
  for model in "${models[@]}"; do
    n=${#configs[@]}
    for i in $(seq 0 $((n - 1))); do  # rotate the order by one each repeat
      run "$model" "${configs[$(((i + rep - 1) % n))]}" "$rep"
    done
  done
  echo "repeat $rep of $repeats done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

/usr/bin/python3 - "$out" "$repeats" "$warmup" "$steps" "$batch" "$bn" "$started" "${models[*]}" "${configs[*]}" <<'PY'
import csv, json, os, statistics, sys
out, repeats, warmup, steps, batch, bn, started = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
models, configs = sys.argv[8].split(), sys.argv[9].split()
labels = {"ddp": "DDP (Python), gloo", "gloo": "dtbench gloo", "mpi": "dtbench mpi",
          "gloo-nolap": "dtbench gloo --no-overlap", "mpi-nolap": "dtbench mpi --no-overlap"}

def load(model, config, rep):
    """Per-run figures in seconds, or None when the run failed."""
    base = f"{out}/{model}.{config}.{rep}"
    if os.path.exists(base + ".failed"):
        return None
    try:
        if config == "ddp":
            r = json.load(open(base + ".json"))
            lg = r.get("ddp_logging", {})
            f = {"step": statistics.median(r["step_s"])}
            f["compute"] = f["step"]
            if "avg_backward_comm_time" in lg:
                f["comm"] = lg["avg_backward_comm_time"] * 1e-9
                f["exposed"] = max(0.0, (lg["avg_backward_comm_time"] - lg["avg_backward_compute_comm_overlap_time"]) * 1e-9)
                f["overlap"] = 1 - f["exposed"] / f["comm"] if f["comm"] > 0 else float("nan")
            return f
        rows = [r for r in csv.DictReader(open(base + "/batches.csv")) if r["rank"] == "0" and int(r["step"]) > warmup]
        if len(rows) != steps:
            return None
        col = lambda k: [float(r[k]) for r in rows]
        total, exposed = sum(col("comm_total_s")), sum(col("comm_exposed_s"))
        return {"step": statistics.median(col("step_s")),
                "compute": statistics.median([float(r["step_s"]) - float(r["data_s"]) for r in rows]),
                "data": statistics.median(col("data_s")),
                "comm": statistics.median(col("comm_total_s")), "exposed": statistics.median(col("comm_exposed_s")),
                "overlap": (total - exposed) / total if total > 0 else float("nan")}
    except (OSError, ValueError, KeyError):
        return None

def cell(values, scale=1e3, fmt="{:.0f}"):
    if not values:
        return "-"
    show = lambda v: fmt.format(v * scale).replace("-0.00", "0.00")  # no-overlap: exposed ≈ total
    return f"{show(statistics.median(values))} ({show(min(values))}–{show(max(values))})"

print(f"\nTwo ranks, batch {batch} per rank, 1 thread per rank, {warmup} warm-up + {steps} timed steps, "
      f"BatchNorm statistics: {bn}; {repeats} repeats, started {started}\n")
print("| model | run | step ms | ratio to DDP | step − data ms | ratio to DDP | comm total ms | comm exposed ms | overlap fraction | failed runs |")
print("|---|---|---|---|---|---|---|---|---|---|")
raw = {}
for model in models:
    ddp = [f for f in (load(model, "ddp", r) for r in range(1, repeats + 1)) if f]
    ddp_step = statistics.median([f["step"] for f in ddp]) if ddp else None
    for config in configs:
        runs = [load(model, config, r) for r in range(1, repeats + 1)]
        ok = [f for f in runs if f]
        raw[f"{model}/{config}"] = runs
        get = lambda k: [f[k] for f in ok if k in f]
        ratio = lambda k: (f"{statistics.median(get(k)) / ddp_step:.3f}" if ok and ddp_step and config != "ddp" else "-")
        mark = "¹" if config == "ddp" and get("comm") else ""
        print(f"| {model} | {labels.get(config, config)} | {cell(get('step'))} | {ratio('step')} | "
              f"{cell(get('compute')) if config != 'ddp' else '(same)'} | {ratio('compute')} | "
              f"{cell(get('comm'))}{mark} | {cell(get('exposed'))}{mark} | {cell(get('overlap'), 1, '{:.2f}')}{mark} | "
              f"{repeats - len(ok)} of {repeats} |")
print("\nMedian over repeats (min–max of the per-run medians over the timed steps of rank 0). "
      "Ratio = dtbench median / DDP median step time (≤ 1.0: dtbench at least as fast). "
      "overlap fraction = (comm total − exposed) / total over a run's timed steps.\n"
      "¹ DDP's own runtime statistics (first bucket launched to last reduced; exposed = from the end "
      "of backward on), averaged over the iterations DDP samples, which can include the warm-up steps.")
json.dump({"started": started, "repeats": repeats, "warmup": warmup, "steps": steps, "batch": batch, "bn": bn,
           "runs": raw}, open(f"{out}/summary.json", "w"), indent=1)
PY
