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
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "measure_compression.sh: $*" >&2; exit 2; }
[[ $# -ge 2 ]] || die "usage: $0 DTBENCH OUT [--phase calibrate|train|analyse|all] [--rates LIST] [--compress LIST] [--repeats N] [--model M] [--backend B] [--nodes N]"
dtbench=$(realpath "$1") out=$2
shift 2
phase=all rates="50mbit 100mbit 200mbit 500mbit 1gbit 2gbit 5gbit" compressions="none fp16 powersgd" repeats=2
model=resnet18 backend=gloo nodes=2
while (($#)); do
  [[ $# -ge 2 ]] || die "$1 needs a value"
  case $1 in
    --phase) phase=$2 ;; --rates) rates=$2 ;; --compress) compressions=$2 ;; --repeats) repeats=$2 ;;
    --model) model=$2 ;; --backend) backend=$2 ;; --nodes) nodes=$2 ;;
    *) die "unknown option $1" ;;
  esac
  shift 2
done
case $phase in calibrate | train | analyse | all) ;; *) die "--phase is calibrate, train, analyse or all, got $phase" ;; esac
[[ -x $dtbench ]] || die "$dtbench is not executable"
mkdir -p "$out/hw" "$out/train"
out=$(realpath "$out")
log() { echo "[$(date -u +%T)] $*" >&2; }
if [[ $phase != analyse ]]; then
  [[ -n ${DTBENCH_CLUSTER:-} && -f $DTBENCH_CLUSTER ]] || die "no cluster: run eval \"\$(experiments/cluster/cluster.sh env)\" first"
  name=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$DTBENCH_CLUSTER")
fi
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
set_rate() { "$here/cluster.sh" --name "$name" rate "$1" >/dev/null 2>&1 || die "cannot set the links to $1"; }

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
