#!/usr/bin/env bash
# The main job on the embedded default: ResNet-18 on synthetic CIFAR-shaped data (no download),
# two epochs cut to a few steps each, one rank on the CPU. Prints what it measured; the run
# directory lands under runs/. Usage: scripts/main_job.sh [path/to/dtbench]
set -euo pipefail
cd "$(dirname "$0")/.."
dtbench=${1:-build/dtbench}
out=runs/main-$(date +%Y%m%d-%H%M%S)-$$
"$dtbench" train --model resnet18 --dataset synthetic --synthetic-test-size 1000 \
  --epochs 2 --max-steps 20 --batch-size 32 --out "$out"
echo "run directory: $out (config.json, train_history.log, batches.csv, summary.json)"
