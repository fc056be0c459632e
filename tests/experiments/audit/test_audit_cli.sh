#!/usr/bin/env bash
# dtbench audit on a real two-rank run (docs/audit.md): mpirun starts 2 ranks of dtbench train
# --sample-ledger (lenet, synthetic data of 203 samples: shares of 102 with one sample of padding, 2
# epochs); the audit finds every epoch clean (exit 0). A copy whose rank 1 trains a sample of rank 0
# once more fails (exit 1) naming the index and both steps; without rank 1's ledger it fails naming
# the rank; a run without a ledger, and no RUNDIR, are usage errors (exit 2). One rank stopped by SIGTERM
# audits clean with a partial last epoch, and its --resume appends the rest of the ledger.
# Usage: test_audit_cli.sh path/to/dtbench
set -uo pipefail
dtbench=$1
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun is not installed"; exit 77; }
"$dtbench" --version | grep -q 'mpi yes' || { echo "SKIP: dtbench was built without MPI"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

timeout 90 mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2 "$dtbench" train --backend mpi \
  --model lenet --dataset synthetic --synthetic-train-size 203 --batch-size 16 --epochs 2 --no-eval \
  --threads 1 --workers 0 --quiet --timeout 30 --sample-ledger --out "$tmp/run" >"$tmp/train.log" 2>&1 ||
  { cat "$tmp/train.log"; echo "FAIL: training ended with $?"; exit 1; }
grep -q '"sample_ledger": true' "$tmp/run/config.json" || fail "config.json does not record sample_ledger true"

"$dtbench" audit "$tmp/run" >"$tmp/clean.out" 2>&1
rc=$?
cat "$tmp/clean.out"
[[ $rc -eq 0 ]] || fail "the audit of the clean run exited $rc (want 0)"
# Two epochs, each: 204 samples expected and seen (one padded), none duplicated, missing or dropped.
for epoch in 1 2; do
  grep -Eq "^ +$epoch +204 +204 +0 +0 +0 +1 +2 +1  ok$" "$tmp/clean.out" ||
    fail "epoch $epoch's row is not '204 expected, 204 seen, 0 duplicates, 0 missing, 0 dropped, 1 padded, 2 ranks, 1 segment, ok'"
done
grep -q '^clean:' "$tmp/clean.out" || fail "the clean audit does not say clean"

# Rank 1's last step of epoch 1 (6 samples) trains the first sample of rank 0's first step once more.
cp -r "$tmp/run" "$tmp/dup"
index=$(/usr/bin/python3 - "$tmp/dup" <<'PY'
import csv, sys
d = sys.argv[1]
def expand(text):
    out = []
    for part in text.split(";"):
        first, _, last = part.partition("-")
        out += range(int(first), int(last or first) + 1)
    return out
def ranges(indices):
    indices, parts, i = sorted(indices), [], 0
    while i < len(indices):
        j = i
        while j + 1 < len(indices) and indices[j + 1] == indices[j] + 1:
            j += 1
        parts.append(str(indices[i]) if i == j else f"{indices[i]}-{indices[j]}")
        i = j + 1
    return ";".join(parts)
rank0 = list(csv.DictReader(open(f"{d}/sample_ledger.rank0.csv")))
twice = expand(rank0[0]["indices"])[0]
path = f"{d}/sample_ledger.rank1.csv"
rows = list(csv.DictReader(open(path)))
fields = list(rows[0].keys())
row = next(r for r in rows if r["epoch"] == "1" and r["step"] == "7")
row["indices"] = ranges(expand(row["indices"]) + [twice])
row["samples"] = str(int(row["samples"]) + 1)
with open(path, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
print(twice)
PY
)
"$dtbench" audit "$tmp/dup" >"$tmp/dup.out" 2>&1
rc=$?
cat "$tmp/dup.out"
[[ $rc -eq 1 ]] || fail "the audit of the corrupted ledger exited $rc (want 1)"
grep -q "epoch 1 index $index: seen 2 times, expected 1: rank 0 step 1 (global step 1), rank 1 step 7 (global step 7)" \
  "$tmp/dup.out" || fail "the audit does not name index $index with rank 0 step 1 and rank 1 step 7"
grep -Eq "^ +1 +204 +205 +1 +0 .*DUPLICATES$" "$tmp/dup.out" || fail "epoch 1's row does not count 205 seen, 1 duplicate"

rm "$tmp/dup/sample_ledger.rank1.csv"
"$dtbench" audit "$tmp/dup" >"$tmp/rank.out" 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "the audit without rank 1's ledger exited $rc (want 1)"
grep -q "ledger of rank 1 (sample_ledger.rank1.csv) is missing" "$tmp/rank.out" ||
  { cat "$tmp/rank.out"; fail "the audit without rank 1's ledger does not name rank 1"; }

mkdir "$tmp/none"
"$dtbench" audit "$tmp/none" >"$tmp/none.out" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "the audit of a run without a ledger exited $rc (want 2)"
grep -q -- "--sample-ledger" "$tmp/none.out" || { cat "$tmp/none.out"; fail "it does not say to rerun with --sample-ledger"; }
"$dtbench" audit >"$tmp/usage.out" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "dtbench audit without RUNDIR exited $rc (want 2)"

# One rank stopped by SIGTERM in its first epoch: the stopped run's ledger audits clean with a partial
# last epoch; --resume appends the rest, each step once.
one=(train --model lenet --dataset synthetic --synthetic-train-size 4000 --batch-size 16 --epochs 2 --no-eval
     --threads 1 --workers 0 --quiet --sample-ledger --out "$tmp/stopped")
"$dtbench" "${one[@]}" >"$tmp/stopped.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -f $tmp/stopped/train_history.log && $(grep -c ',Batch,' "$tmp/stopped/train_history.log") -ge 60 ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [[ $rc -ne 75 ]]; then
  fail "the run stopped by SIGTERM exited $rc (want 75, interrupted): $(tail -c 300 "$tmp/stopped.log")"
else
  "$dtbench" audit "$tmp/stopped" >"$tmp/stopped.out" 2>&1
  rc=$?
  [[ $rc -eq 0 ]] || { cat "$tmp/stopped.out"; fail "the audit of the stopped run exited $rc (want 0)"; }
  grep -Eq "^ +1 +4000 +[0-9]+ +0 +- +0 +0 +1 +1  partial$" "$tmp/stopped.out" ||
    { cat "$tmp/stopped.out"; fail "the stopped run's epoch 1 is not partial"; }
  timeout 60 "$dtbench" "${one[@]}" --resume >"$tmp/resumed.log" 2>&1 ||
    fail "--resume exited $?: $(tail -c 300 "$tmp/resumed.log")"
  "$dtbench" audit "$tmp/stopped" >"$tmp/resumed.out" 2>&1
  rc=$?
  cat "$tmp/resumed.out"
  [[ $rc -eq 0 ]] || fail "the audit of the resumed run exited $rc (want 0)"
  rows=$(( $(wc -l <"$tmp/stopped/sample_ledger.rank0.csv") - 1 ))
  [[ $rows -eq 500 ]] || fail "the resumed run's ledger holds $rows rows (want 2 epochs x 250 steps)"
  for epoch in 1 2; do
    grep -Eq "^ +$epoch +4000 +4000 +0 +0 +0 +0 +1 +1  ok$" "$tmp/resumed.out" || fail "the resumed run's epoch $epoch is not ok"
  done
fi

[[ $failures -eq 0 ]] &&
  echo "ok: dtbench audit: a 2-rank ledger clean, a duplicate named, a missing rank named; a stopped run partial, resumed clean" ||
  exit 1
