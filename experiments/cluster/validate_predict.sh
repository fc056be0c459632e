#!/usr/bin/env bash
# validate_predict.sh: `dtbench predict` against measurements on the emulated cluster (docs/predict.md,
# "Validation"; the tables of docs/benchmarks-history.md, "Prediction").
#
#   experiments/cluster/cluster.sh up --nodes 4 && eval "$(experiments/cluster/cluster.sh env)"
#   experiments/cluster/validate_predict.sh DTBENCH OUT [--phase allreduce|train|analyse|all] [--repeats 5]
#
# allreduce: for each link rate, a calibration launch per backend (ring and native over 2 nodes,
#   OUT/allreduce/cal-RATE-BACKEND.csv), then REPEATS launches of every topology per backend and node
#   count (OUT/allreduce/RATE-BACKEND-nN-rK.csv). Sizes and node counts shrink with the rate so that
#   one pass stays within minutes: 1gbit 64K-16M at 2, 3, 4 nodes; 200mbit 64K-4M at 2, 4; 50mbit 64K-1M at 2.
# train: per model, a one-rank run and one 2-node run at 1 Gbit/s (the prediction's inputs), then
#   REPEATS 2-node runs (one rank per node, gloo ring) per link rate (OUT/train/...).
# analyse: hardware files fitted per rate and backend from the calibration launches only; every other
#   launch predicted with `dtbench predict --allreduce` against the median of its repeats (spread
#   beside); Table 1 of `dtbench predict --format csv` from each input run against the median T of the
#   repeats. Writes OUT/validation.md.
# Runs one after another on nodes node1..nodeN (rank 0 on node1, where MASTER_ADDR points), each under a
# time limit; the links are what is measured, so nothing else should run meanwhile. Root.
# shellcheck source=measure_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure_common.sh"
phase=all repeats=5
measure_start "[--phase allreduce|train|analyse|all] [--repeats N]" "--phase=phase --repeats=repeats" "$@"
measure_need_cluster
mkdir -p "$out/allreduce" "$out/train"
out=$(realpath "$out")
port=$((22000 + $$ % 4000))

sizes_for() { case $1 in 1gbit) echo "64K 16M" ;; 200mbit) echo "64K 4M" ;; *) echo "64K 1M" ;; esac; }
nodes_for() { case $1 in 1gbit) echo "2 3 4" ;; 200mbit) echo "2 4" ;; *) echo "2" ;; esac; }

# allreduce CSV NODES BACKEND TOPOLOGIES MIN MAX
allreduce() {
  local csv=$1 nodes=$2 backend=$3 topologies=$4 min=$5 max=$6 mpi=()
  [[ -s $csv ]] && return 0  # measured already: rerunning finishes what is left
  [[ $backend == mpi ]] && mpi=(--mpi=pmix)
  port=$((port + 1))
  MASTER_ADDR=node1 MASTER_PORT=$port timeout 900 srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node=1 \
    --cpus-per-task=1 "${mpi[@]}" "$dtbench" allreduce --backend "$backend" --topology "$topologies" -b "$min" \
    -e "$max" -f 4 --warmup-iters 1 --iters 3 --timeout 120 --csv "$csv.part" >"${csv%.csv}.log" 2>&1 ||
    { log "  failed: see ${csv%.csv}.log"; return 0; }
  mv "$csv.part" "$csv"
}

if [[ $phase == all || $phase == allreduce ]]; then
  for rate in 1gbit 200mbit 50mbit; do
    set_rate "$rate"
    read -r min max <<<"$(sizes_for "$rate")"
    for backend in gloo mpi; do
      log "$rate $backend: calibration (ring, native over 2 nodes)"
      allreduce "$out/allreduce/cal-$rate-$backend.csv" 2 "$backend" ring,native "$min" "$max"
    done
    for k in $(seq 1 "$repeats"); do
      for nodes in $(nodes_for "$rate"); do
        for backend in gloo mpi; do
          log "$rate $backend $nodes nodes: repeat $k"
          allreduce "$out/allreduce/$rate-$backend-n$nodes-r$k.csv" "$nodes" "$backend" all "$min" "$max"
        done
      done
    done
  done
fi

# train DIR NODES ARGS...: one gloo ring training run (one rank per node).
train_common=(--dataset synthetic --synthetic-train-size 512 --synthetic-test-size 64 --batch-size 32 --epochs 2
  --no-eval --threads 1 --workers 0 --device cpu --backend gloo --topology ring --timeout 300 --quiet)
train() {
  local dir=$1 nodes=$2; shift 2
  [[ -f $dir/summary.json ]] && grep -q '"completed"' "$dir/summary.json" && return 0
  rm -rf "$dir"
  port=$((port + 1))
  MASTER_ADDR=node1 MASTER_PORT=$port timeout 1800 srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node=1 \
    --cpus-per-task=1 "$dtbench" train "${train_common[@]}" --out "$dir" "$@" >"$dir.log" 2>&1 || log "  failed: see $dir.log"
}
rates_of() { case $1 in resnet18) echo "1gbit 200mbit" ;; *) echo "1gbit 200mbit 50mbit" ;; esac; }

if [[ $phase == all || $phase == train ]]; then
  for model in mobilenetv2 resnet18; do
    set_rate 1gbit
    log "$model: inputs (1 rank; 2 nodes at 1gbit)"
    train "$out/train/$model-input-1rank" 1 --model "$model"
    train "$out/train/$model-input-2nodes-1gbit" 2 --model "$model"
    for rate in $(rates_of "$model"); do
      set_rate "$rate"
      for k in $(seq 1 "$repeats"); do
        log "$model $rate: repeat $k"
        train "$out/train/$model-$rate-r$k" 2 --model "$model"
      done
    done
  done
  set_rate 1gbit
fi

if [[ $phase == all || $phase == analyse ]]; then
  /usr/bin/python3 "$here/validate_predict.py" "$dtbench" "$out" "$repeats"
fi
