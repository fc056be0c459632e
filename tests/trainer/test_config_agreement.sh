#!/usr/bin/env bash
# Every rank must run with the same settings that affect the result or the collectives
# (docs/design.md, "Correctness guards"; trainer/config_agreement.h). Under `dtbench launch -n 2`,
# a wrapper gives rank 1 other flags than rank 0:
#  (a) rank 1 differs in every shared flag at once: the launch exits 2 well before the default
#      --timeout (a hang fails the test), the message names each flag with both ranks' values,
#      and no rank trained a step (no batches.csv rows, no checkpoint);
#  (b) rank 1 differs only in per-rank settings (threads, workers, timeout, data directory): the
#      run completes with one batches.csv row per rank;
#  (c) with MPI built in, rank 1 with --backend mpi: the launch fails quickly, saying every rank
#      must run with the same --backend.
# The default --timeout (300 s) stays: the check must answer in one exchange, not by a deadline.
# Usage: tests/trainer/test_config_agreement.sh path/to/dtbench
set -uo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
start_all=$(date +%s)

# wrap.sh RANK0_FLAGS RANK1_FLAGS COMMAND...: COMMAND with this rank's flags appended (dtbench
# launch gives each rank RANK).
cat >"$tmp/wrap.sh" <<'EOF'
#!/bin/sh
if [ "$RANK" = 1 ]; then extra=$2; else extra=$1; fi
shift 2
exec "$@" $extra
EOF
chmod +x "$tmp/wrap.sh"

base=(train --dataset synthetic --synthetic-test-size 0 --quiet --no-eval)
# Rank 0's flags in every launch; each launch gives rank 1 these or others in their place.
rank0="--model lenet --epochs 1 --max-steps 1 --synthetic-train-size 64 --threads 1 --workers 0"

# launch NAME RANK0_FLAGS RANK1_FLAGS: a 2-rank launch writing $tmp/NAME; sets `rc`, `out` and `elapsed`.
# 90 s at most: far below the default --timeout of 300 s, so a rank waiting on its peer shows as a hang.
launch() {
  local name=$1 start
  start=$(date +%s)
  out=$(timeout --kill-after=10 90 "$dtbench" launch -n 2 --grace 2 -- "$tmp/wrap.sh" "$2" "$3" "$dtbench" \
        "${base[@]}" --out "$tmp/$name" 2>&1)
  rc=$?
  elapsed=$(( $(date +%s) - start ))
}

# trained DIR: batches.csv rows and checkpoint files in DIR (0 when there are none).
trained() {
  local rows=0 files=0
  [[ -f $1/batches.csv ]] && rows=$(( $(wc -l <"$1/batches.csv") - 1 ))
  [[ -d $1/checkpoint ]] && files=$(find "$1/checkpoint" -type f | wc -l)
  echo $((rows + files))
}

# ---------------------------------------------------------------------------------------------
echo "(a) rank 1 differs in every shared flag at once"
# flag, rank 1's value; each must be named with both ranks' values.
differing=(--lr 0.5  --momentum 0.5  --optimizer rmsprop  --weight-decay 0.01  --seed 7  --amp bf16
           --batch-size 4  --model resnet18  --epochs 2  --max-steps 2  --topology ring  --checkpoint-every 1
           --sync pairavg  --bucket-mb 0.5  --synthetic-train-size 32  --ranks-per-host 1  --compress-rank 4
           --compress-start 3)
rank1="--threads 1 --workers 0 --drop-last --channels-last --timeline"
for ((i = 0; i < ${#differing[@]}; i += 2)); do rank1+=" ${differing[i]} ${differing[i + 1]}"; done
launch disagree "$rank0" "$rank1"
if [[ $rc -ne 2 ]]; then
  fail "(a) the launch exited $rc after ${elapsed}s (want 2, a usage error); output:"; tail -n 20 <<<"$out" >&2
else
  echo "ok: (a) exit 2 after ${elapsed}s"
fi
named=0
for ((i = 0; i < ${#differing[@]}; i += 2)); do
  flag=${differing[i]}
  if grep -qE -- "$flag \(rank 0: [^;)]+; rank 1: ${differing[i + 1]}\)" <<<"$out"; then
    named=$((named + 1))
  else
    fail "(a) no message names $flag with rank 0's value and rank 1's ${differing[i + 1]}"
  fi
done
for flag in --drop-last --channels-last --timeline; do
  grep -qE -- "$flag \(rank 0: false; rank 1: true\)" <<<"$out" && named=$((named + 1)) ||
    fail "(a) no message names $flag (rank 0: false; rank 1: true)"
done
grep -q 'every rank must run with the same flags' <<<"$out" || fail "(a) the message does not say what to fix"
[[ $named -gt 0 ]] && echo "ok: (a) $named flags named with both ranks' values: $(grep -m1 -o 'the ranks disagree.\{0,160\}' <<<"$out")..."
steps=$(trained "$tmp/disagree")
[[ $steps -eq 0 ]] || fail "(a) the ranks trained before failing: $steps batches.csv rows and checkpoint files"

# ---------------------------------------------------------------------------------------------
echo "(b) rank 1 differs only in per-rank settings"
launch per_rank "$rank0" "--model lenet --epochs 1 --max-steps 1 --synthetic-train-size 64 --threads 2 --workers 1
  --timeout 200 --data-dir $tmp/elsewhere"
rows=0
[[ -f $tmp/per_rank/batches.csv ]] && rows=$(( $(wc -l <"$tmp/per_rank/batches.csv") - 1 ))
if [[ $rc -ne 0 || $rows -ne 2 ]]; then
  fail "(b) the launch exited $rc with $rows batches.csv rows (want 0 and one row per rank); output:"
  tail -n 20 <<<"$out" >&2
else
  echo "ok: (b) completed in ${elapsed}s with one row per rank"
fi

# ---------------------------------------------------------------------------------------------
echo "(c) rank 1 with --backend mpi"
launch backend "$rank0" "$rank0 --backend mpi"
if grep -q 'this build has no MPI' <<<"$out"; then
  echo "skipped: (c) this build has no MPI"
else
  if [[ $rc -eq 0 || $rc -ge 124 ]]; then
    fail "(c) the launch exited $rc after ${elapsed}s (want a failure exit code in 1..123)"; tail -n 20 <<<"$out" >&2
  elif ! grep -q 'every rank must run with the same --backend' <<<"$out"; then
    fail "(c) no message says every rank must run with the same --backend; output:"; tail -n 20 <<<"$out" >&2
  else
    echo "ok: (c) exit $rc after ${elapsed}s: $(grep -m1 -o 'every rank must run with the same --backend.\{0,80\}' <<<"$out")..."
  fi
fi

echo "config_agreement_test: $failures failure(s), total $(( $(date +%s) - start_all ))s"
exit $((failures > 0))
