#!/bin/bash
# Submits slurm/sweep_array.sbatch for SWEEP_BATCH_SIZES x SWEEP_RANKS: --array=0-(K-1),
# --ntasks = the largest rank count, --gres=gpu:<that> unless SWEEP_DEVICE=cpu.
#   SWEEP_NAME=r18 SWEEP_BATCH_SIZES="32 128" SWEEP_RANKS="1 2 4" \
#     slurm/submit_sweep.sh [sbatch options...] -- [dtbench train arguments...]
set -euo pipefail
read -r -a batches <<<"${SWEEP_BATCH_SIZES:?set SWEEP_BATCH_SIZES, e.g. \"32 128\"}"
read -r -a ranks <<<"${SWEEP_RANKS:?set SWEEP_RANKS, e.g. \"1 2 4\"}"
sbatch_opts=()
while (($#)) && [[ $1 != -- ]]; do sbatch_opts+=("$1"); shift; done
(($#)) && shift
max=0
for n in "${ranks[@]}"; do ((n > max)) && max=$n; done
res=(--ntasks="$max")
[[ ${SWEEP_DEVICE:-cuda} == cpu ]] || res+=(--gres=gpu:"$max")
here=$(cd "$(dirname "$0")" && pwd)
set -x
sbatch --array=0-$((${#batches[@]} * ${#ranks[@]} - 1)) "${res[@]}" "${sbatch_opts[@]}" "$here/sweep_array.sbatch" "$@"
