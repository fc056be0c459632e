#!/usr/bin/env bash
# The main job on the embedded default: ResNet-18 on synthetic CIFAR-shaped data (no download),
# two epochs cut to 15 steps each, one rank on the CPU (every core). lr 0.02 rather than the
# default 0.1: from scratch, without warm-up, 0.1 overshoots on this very separable task. Prints what it measured; the run
# directory lands under runs/. Usage: scripts/main_job.sh [path/to/dtbench]
set -euo pipefail
cd "$(dirname "$0")/.."
dtbench=${1:-build/dtbench}
out=runs/main-$(date +%Y%m%d-%H%M%S)-$$
"$dtbench" train --model resnet18 --dataset synthetic --synthetic-test-size 1000 \
  --epochs 2 --max-steps 15 --batch-size 64 --lr 0.02 --out "$out"
echo "run directory: $out (config.json, train_history.log, batches.csv, summary.json)"
