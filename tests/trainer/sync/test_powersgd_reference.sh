#!/usr/bin/env bash
# dtbench's PowerSGD (trainer/sync/powersgd.h) against PyTorch's powerSGD_hook on the same torch: two
# ranks (and four, at rank 2) train LeNet on the same seeded batches from the same parameters and the same first Q, dtbench
# through BucketedAllreduce (powersgd_trajectory) and PyTorch under DistributedDataParallel over Gloo
# (powersgd_reference.py); every step's loss on both ranks and the final parameters must agree within
# the tolerances powersgd_reference.py states, over 24 steps, compressed from step 3. (Four ranks: the
# division by the world size and the residuals of more than two ranks.)
# Arguments: the powersgd_trajectory executable, a python whose torch is the reference (empty: skipped).
set -euo pipefail
trajectory=$1 python=${2:-}
if [[ -z $python ]]; then
  echo "no python with torch was configured (DTBENCH_TORCH_PYTHON): skipped"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for rank in 1 2; do
  "$trajectory" "$out" 24 $rank 2 5
  "$python" "$(dirname "$0")/powersgd_reference.py" "$out" 24 $rank 2 5
done
"$trajectory" "$out" 24 2 2 5 4
"$python" "$(dirname "$0")/powersgd_reference.py" "$out" 24 2 2 5 4
