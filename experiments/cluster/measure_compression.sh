#!/usr/bin/env bash
# measure_compression.sh: where gradient compression pays on the emulated cluster (docs/benchmarks.md,
# "Gradient compression"): ResNet-18 (or --model) over gloo, 2 nodes x 1 rank, at each link rate, with
# each --compress, against `dtbench predict --compress` from one run per compression.
#
#   experiments/cluster/cluster.sh up --nodes 2 && eval "$(experiments/cluster/cluster.sh env)"
#   experiments/cluster/measure_compression.sh DTBENCH OUT [--phase calibrate|train|analyse|all]
#       [--rates "50mbit 100mbit ..."] [--compress "none fp16 powersgd"] [--repeats 2] [--model resnet18]
#       [--backend gloo] [--nodes 2]
# A compression is a --compress value, or powersgd:R for --compress powersgd --compress-rank R. With
# --backend or --model other than gloo and resnet18, or --nodes other than 2, the runs are named after
# them too (OUT/train/RATE-COMPRESS[-BACKEND][-MODEL][-nN]-rK).
#
# calibrate: per rate, a `dtbench allreduce` launch (ring and native, 1-16 MB) fitted into a hardware
#   file by `dtbench predict --calibrate` (OUT/hw/RATE[-BACKEND][-nN].json).
# train: per repeat, rate and compression (repeat k of every rate before repeat k + 1 of any), one training
#   run (OUT/train/RATE-COMPRESS-rK): batch 32 per
#   rank, 8 steps, PowerSGD compressing from step 3.
# analyse: per point the median of rank 0's step time (step_s - data_s) over steps 4..8 and of its
#   compress_s, the predicted step (each compression predicted at every rate from its runs at the
#   highest rate, on that rate's hardware file, the median of the repeats' predictions), and the
#   break-even rate of each pair of compressions (measured and predicted: where their step times cross,
#   interpolated in log rate; predicted also from every rate's runs in turn). Writes
#   OUT/compression.md.
# Runs one after another on node1..nodeN (rank 0 on node1), each under a time limit; the links are what
# is measured, so nothing else should run meanwhile. Root.
# shellcheck source=measure_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure_common.sh"
phase=all rates="50mbit 100mbit 200mbit 500mbit 1gbit 2gbit 5gbit" compressions="none fp16 powersgd" repeats=2
model=resnet18 backend=gloo nodes=2
measure_start "[--phase calibrate|train|analyse|all] [--rates LIST] [--compress LIST] [--repeats N] [--model M] [--backend B] [--nodes N]" \
  "--phase=phase --rates=rates --compress=compressions --repeats=repeats --model=model --backend=backend --nodes=nodes" "$@"
case $phase in calibrate | train | analyse | all) ;; *) die "--phase is calibrate, train, analyse or all, got $phase" ;; esac
mkdir -p "$out/hw" "$out/train"
out=$(realpath "$out")
[[ $phase == analyse ]] || measure_need_cluster
port=$((23000 + $$ % 4000))
mpi=()
[[ $backend == mpi ]] && mpi=(--mpi=pmix)
# What tells this series' runs apart from the default one's.
suffix() {
  local s=""
  [[ $backend != gloo ]] && s+="-$backend"
  [[ $model != resnet18 ]] && s+="-$model"
  [[ $nodes != 2 ]] && s+="-n$nodes"
  echo "$s"
}
# The hardware file's: the links and the backend, not the model.
hw_suffix() {
  local s=""
  [[ $backend != gloo ]] && s+="-$backend"
  [[ $nodes != 2 ]] && s+="-n$nodes"
  echo "$s"
}

if [[ $phase == all || $phase == calibrate ]]; then
  for rate in $rates; do
    hw=$out/hw/$rate$(hw_suffix)
    [[ -s $hw.json ]] && continue
    set_rate "$rate"
    log "$rate: calibration ($backend ring and native over $nodes nodes, 1-16 MB)"
    port=$((port + 1))
    MASTER_ADDR=node1 MASTER_PORT=$port timeout 900 srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node=1 \
      --cpus-per-task=1 "${mpi[@]}" "$dtbench" allreduce --backend "$backend" --topology ring,native -b 1M -e 16M -f 4 \
      --warmup-iters 1 --iters 3 --timeout 300 --csv "$hw.csv" >"$hw.log" 2>&1 || { log "  failed: see $hw.log"; continue; }
    "$dtbench" predict --calibrate "$hw.csv" --output "$hw.json" >>"$hw.log" 2>&1 || log "  calibration failed: see $hw.log"
  done
fi

if [[ $phase == all || $phase == train ]]; then
  # Repeat k of every rate before repeat k + 1 of any: the machine's drift over the sweep then reads as
  # the repeats' spread, not as a difference between rates (docs/benchmarks-history.md, "The compression
  # sweep again, repeats interleaved across rates").
  for k in $(seq 1 "$repeats"); do
    for rate in $rates; do
      set_rate "$rate"
      for c in $compressions; do
        dir=$out/train/$rate-$c$(suffix)-r$k
        [[ -f $dir/summary.json ]] && grep -q '"completed"' "$dir/summary.json" && continue
        rm -rf "$dir"
        log "$rate $c: repeat $k"
        port=$((port + 1))
        MASTER_ADDR=node1 MASTER_PORT=$port timeout 1800 srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node=1 \
          --cpus-per-task=1 "${mpi[@]}" "$dtbench" train --model "$model" --dataset synthetic \
          --synthetic-train-size $((32 * 8 * nodes)) --synthetic-test-size 0 --batch-size 32 --epochs 1 --max-steps 8 \
          --no-eval --threads 1 --workers 0 --device cpu --backend "$backend" --topology native --compress "${c%%:*}" \
          $([[ $c == *:* ]] && echo --compress-rank "${c#*:}") --compress-start 2 --timeout 600 --quiet --out "$dir" \
          >"$dir.log" 2>&1 || log "  failed: see $dir.log"
      done
    done
  done
fi

if [[ $phase == all || $phase == analyse ]]; then
  /usr/bin/python3 "$here/measure_compression.py" "$dtbench" "$out" "$rates" "$compressions" "$repeats" "$(suffix)" "$(hw_suffix)" "$nodes"
fi
