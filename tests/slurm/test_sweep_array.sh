#!/bin/bash
# A real job-array sweep through slurm/sweep_array.sbatch on a private one-node Slurm: per-rank
# batch 8,16 x ranks 1,2 (4 array tasks) of lenet on synthetic data, CPU only; every point must
# complete, and `dtbench report` must give 4 rows of Table 1 with speedups for the 2-rank points.
# Then the same array is submitted again: every point must be skipped as completed.
#   tests/slurm/test_sweep_array.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
start_slurm

export DTBENCH RUNS=$work/runs SWEEP_NAME=lenet-sweep SWEEP_BATCH_SIZES="8 16" SWEEP_RANKS="1 2"
train=(--model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 64
       --epochs 2 --max-steps 3 --threads 1 --workers 1 --quiet)
cd "$work" || fail "cd $work"

submit() {
  sbatch --parsable --array=0-3 --ntasks=2 --cpus-per-task=1 --time=5 \
    --output="$work/sweep$1-%A_%a.out" "$repo/slurm/sweep_array.sbatch" "${train[@]}" |
    cut -d';' -f1
}
all_done() { ! squeue -h -j "$1" -o %i 2>/dev/null | grep -q .; }

info "submitting the sweep"
job=$(submit 1) || fail "sbatch failed"
[[ -n $job ]] || fail "sbatch gave no job id"
wait_for 150 "array job $job to finish" all_done "$job"
for i in 0 1 2 3; do
  state=$(job_state "${job}_$i")
  [[ $state == COMPLETED ]] || fail "array task ${job}_$i ended $state"
done

points=(lenet-bs8-n1 lenet-bs8-n2 lenet-bs16-n1 lenet-bs16-n2)
for p in "${points[@]}"; do
  s=$(run_status "$RUNS/$SWEEP_NAME/$p")
  [[ $s == completed ]] || fail "$p: dtbench status '${s:-none}'"
done

csv=$("$DTBENCH" report "$RUNS/$SWEEP_NAME" --table time_speedup --format csv) || fail "dtbench report failed"
echo "$csv"
python3 - "$csv" <<'PY' || fail "Table 1 is not as expected"
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
assert len(rows) == 4, f"{len(rows)} rows, want 4"
cols = rows[0].keys()
nkey = next(k for k in cols if k.lower() in ("ranks", "n", "world_size", "gpus"))
skey = next(k for k in cols if k.lower().startswith("speedup"))
for r in rows:
    if int(r[nkey]) == 2:
        assert r[skey] not in ("", "nan", "-"), f"no speedup in {r}"
        float(r[skey])
PY

info "resubmitting: every point must be skipped"
job2=$(submit 2) || fail "second sbatch failed"
wait_for 60 "array job $job2 to finish" all_done "$job2"
n=$(cat "$work"/sweep2-*.out | grep -c 'is completed; nothing to do')
[[ $n == 4 ]] || fail "the resubmitted sweep skipped $n points, want 4"
echo "PASS: slurm sweep ($job, 4 points) and skip on resubmission ($job2)"
