#!/usr/bin/env bash
# --resume at another world size (docs/design.md, "Resuming at another world size"), gloo ranks on this
# machine, lenet on 4096 synthetic samples, 2 epochs, global batch 32 (128 steps an epoch, 256 in all),
# --sample-ledger:
#  (a) 4 ranks x 8 stopped by SIGTERM inside an epoch (after epoch 1's rows reach the disk), resumed by 2
#      ranks (16 per rank): dtbench audit exits 0 with every epoch ok, 0 duplicates and 0 missing, the
#      stopped epoch checked in full over both segments; config.json lists the two segments. Rank 0's loss
#      of every step (train_history.log) equals that of an uninterrupted run of the step's world at the same
#      global batch to 1e-5 relative: before the resize the 4-rank run's, after it the 2-rank run's, since
#      rank 0 of 2 takes positions P, P+2, ... of the permutation after the consumed prefix P (a multiple of
#      32), which are a 2-rank run's rank 0's positions of the same global step (and the union of a 4-rank
#      run's ranks 0 and 2): the same samples, only the order of the reduction differs. The runs take small
#      steps (lr 0.002, no momentum) so that rounding does not grow chaotically: at lr 0.02 and momentum 0.9
#      an uninterrupted 4-rank and 2-rank run of the same global batches drift 1e-4 apart within an epoch.
#      The same comparison against the other samples (the 4-rank run's rank 0 after the resize) must fail.
#      dtbench report reads the run and leaves it out of its tables as `resized`;
#  (b) the same, 2 ranks resumed by 4;
#  (c) refusals before training that leave the run directory as it was: 3 ranks (32 does not divide:
#      exit 2 naming 2 or 4 ranks and --allow-global-batch-change), a rank's sample ledger missing, another
#      model; then 3 ranks with --allow-global-batch-change train to the end, recording 8 per rank, global
#      batch 24 and lr 0.002 x 24/32 = 0.0015, and audit clean;
#  (d) --sync pairavg stopped at 2 ranks and resumed by 4 is refused (exit 2, naming why), the run
#      directory as it was.
# Usage: test_resize_resume.sh path/to/dtbench
set -uo pipefail
dtbench=$1
source "$(dirname "$0")/run_helpers.sh"
start_test
start_all=$(date +%s)

flags=(train --model lenet --dataset synthetic --synthetic-train-size 4096 --synthetic-test-size 16 --threads 1
       --workers 0 --device cpu --quiet --no-eval --epochs 2 --seed 3 --lr 0.002 --momentum 0 --timeout 30 --sample-ledger)

# start_rank RANK WORLD PORT LOG ARGS...: one rank in the background, its pid appended to `pids`.
start_rank() {
  local rank=$1 world=$2 port=$3 log=$4
  shift 4
  RANK=$rank WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$dtbench" "$@" >"$log.out" 2>"$log.err" &
  pids+=($!)
}

# run_world WORLD LOG ARGS...: WORLD ranks to their end; sets `codes` to their exit codes, rank 0 first.
run_world() {
  local world=$1 log=$2 port first
  shift 2
  port=$(( 20000 + RANDOM % 20000 ))
  first=${#pids[@]}
  for ((r = 0; r < world; r++)); do start_rank $r "$world" $port "$log.$r" "$@"; done
  codes=()
  for ((r = 0; r < world; r++)); do finish "${pids[first + r]}" 240; codes+=("$rc"); done
}

# stopped WORLD DIR ARGS...: a run of WORLD ranks stopped by SIGTERM once epoch 1's rows are on the disk; 0
# when every rank exited 75 with a checkpoint inside an epoch (sets `stop_epoch`).
stopped() {
  local world=$1 dir=$2 port first ok=0
  shift 2
  port=$(( 20000 + RANDOM % 20000 ))
  first=${#pids[@]}
  for ((r = 0; r < world; r++)); do start_rank $r "$world" $port "$dir.log.$r" "$@" --out "$dir"; done
  if ! wait_rows "$dir" 1 90 "${pids[first]}"; then
    fail "$dir: rank 0 logged only $(batch_rows "$dir") Batch rows: $(tail -c 400 "$dir.log.0.err")"
    for p in "${pids[@]:first}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    return 1
  fi
  for ((r = 0; r < world; r++)); do kill -TERM "${pids[first + r]}"; done
  for ((r = 0; r < world; r++)); do
    finish "${pids[first + r]}" 60
    [[ $rc == 75 ]] || { fail "$dir: rank $r exited '$rc' on SIGTERM (want 75): $(tail -c 300 "$dir.log.$r.err")"; ok=1; }
  done
  local done_steps
  done_steps=$(py -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["epoch"], s["steps_done"])' \
    "$dir/checkpoint/state.json" 2>/dev/null)
  echo "    $dir stopped at (epoch, steps done) = ($done_steps)"
  stop_epoch=${done_steps%% *}
  [[ $done_steps =~ ^[12]\ [1-9][0-9]*$ ]] ||
    { fail "$dir: the checkpoint is not inside an epoch (epoch, steps done: '$done_steps')"; ok=1; }
  return $ok
}

audit_table_check='
import sys
stopped = int(sys.argv[1])
rows = [l.split() for l in sys.stdin.read().splitlines() if l.strip()[:1].isdigit()]
assert len(rows) == 2, rows
for r in rows:
    epoch, expected, seen, dups, missing, dropped, padded, ranks, segs, status = r[:10]
    assert dups == "0" and missing == "0" and status == "ok", r
    assert expected == seen, r
for r in rows:
    assert r[8] == ("2" if int(r[0]) == stopped else "1"), r
'
# audit_clean DIR: dtbench audit exits 0, every epoch ok with 0 duplicates and 0 missing, and the stopped
# epoch (`stop_epoch`) trained by 2 segments.
audit_clean() {
  local out code
  out=$("$dtbench" audit "$1" 2>&1)
  code=$?
  echo "$out" | sed 's/^/    /'
  [[ $code == 0 ]] || { fail "$1: dtbench audit exited $code (want 0)"; return; }
  py -c "$audit_table_check" "$stop_epoch" <<<"$out" ||
    fail "$1: the audit's table is not every epoch ok with 0 duplicates and 0 missing, epoch $stop_epoch in 2 segments"
}

# segments DIR: config.json's segments as "first_global_step:world_size:batch_size:global_batch_size:lr ...".
segments() {
  py - "$1/config.json" <<'EOF'
import json, sys
print(" ".join("%d:%d:%d:%d:%g" % (s["first_global_step"], s["world_size"], s["batch_size"], s["global_batch_size"],
                                   s["lr"]) for s in json.load(open(sys.argv[1])).get("segments", [])))
EOF
}

# same_losses RESIZED STEP BEFORE AFTER: rank 0's loss of every step of RESIZED (train_history.log) equals
# BEFORE's up to global step STEP and AFTER's later, to 1e-5 relative.
same_losses() {
  py - "$@" <<'EOF'
import csv, sys
def losses(d):
    with open(f"{d}/train_history.log", newline="") as f:
        return {int(r["Step"]): float(r["Loss"]) for r in csv.DictReader(f) if r["Type"] == "Batch"}
run, at, before, after = losses(sys.argv[1]), int(sys.argv[2]), losses(sys.argv[3]), losses(sys.argv[4])
if sorted(run) != sorted(before) or sorted(run) != sorted(after) or len(run) != 256:
    print(f"the runs' steps differ: {len(run)}, {len(before)} and {len(after)} (want 256 each)"); sys.exit(1)
worst = 0.0
for step in sorted(run):
    want = before[step] if step <= at else after[step]
    rel = abs(run[step] - want) / max(abs(want), 1e-30)
    worst = max(worst, rel)
    if rel > 1e-5:
        print(f"global step {step} (resized after {at}): loss {run[step]!r}, the uninterrupted run's {want!r} "
              f"(relative {rel:.3g})")
        sys.exit(1)
print(f"{len(run)} steps, the largest relative difference {worst:.2g}")
EOF
}

# unchanged DIR: a checksum of everything in DIR but the lock.
unchanged() { (cd "$1" && find . -type f ! -name '*.lock' -print0 | sort -z | xargs -0 md5sum) | md5sum; }

# ---------------------------------------------------------------------------------------------
echo "references: 4 ranks x 8 and 2 ranks x 16, uninterrupted"
run_world 4 "$tmp/whole4" "${flags[@]}" --batch-size 8 --out "$tmp/whole4"
[[ ${codes[*]} == "0 0 0 0" ]] || fail "the uninterrupted 4-rank run exited ${codes[*]}: $(tail -c 400 "$tmp/whole4.0.err")"
run_world 2 "$tmp/whole2" "${flags[@]}" --batch-size 16 --out "$tmp/whole2"
[[ ${codes[*]} == "0 0" ]] || fail "the uninterrupted 2-rank run exited ${codes[*]}: $(tail -c 400 "$tmp/whole2.0.err")"

echo "(a) 4 ranks x 8, SIGTERM, resumed by 2 ranks"
if stopped 4 "$tmp/shrink" "${flags[@]}" --batch-size 8; then
  cp -a "$tmp/shrink" "$tmp/refused"  # (c)'s run, stopped at the same step
  refused_epoch=$stop_epoch
  run_world 2 "$tmp/shrink.resumed" "${flags[@]}" --batch-size 8 --out "$tmp/shrink" --resume
  if [[ ${codes[*]} == "0 0" ]]; then
    audit_clean "$tmp/shrink"
    k=$(json "$tmp/refused/summary.json" interrupted_at_step)
    got=$(segments "$tmp/shrink")
    [[ $got == "1:4:8:32:0.002 $((k + 1)):2:16:32:0.002" ]] ||
      fail "(a) config.json segments '$got' (want '1:4:8:32:0.002 $((k + 1)):2:16:32:0.002')"
    if result=$(same_losses "$tmp/shrink" "$k" "$tmp/whole4" "$tmp/whole2"); then
      echo "ok: (a) losses: $result"
    else
      fail "(a) $result"
    fi
    # The comparison tells samples apart: after the resize, rank 0's batch is not the 4-rank run's rank 0's.
    if result=$(same_losses "$tmp/shrink" "$k" "$tmp/whole4" "$tmp/whole4"); then
      fail "(a) the losses after the resize equal those of other samples too ($result): the check cannot fail"
    fi
    # The rows of ranks 2 and 3 stay; ranks 0 and 1 continue theirs.
    rows=$(py -c 'import csv,sys,collections
c = collections.Counter(r["rank"] for r in csv.DictReader(open(sys.argv[1])))
print(" ".join(f"{r}:{c[r]}" for r in sorted(c)))' "$tmp/shrink/batches.csv")
    [[ $rows == "0:256 1:256 2:$k 3:$k" ]] || fail "(a) batches.csv rows per rank '$rows' (want 0:256 1:256 2:$k 3:$k)"
    # dtbench report reads the resized run and leaves it out of its tables, saying why.
    if "$dtbench" report "$tmp/shrink" >"$tmp/report.md" 2>"$tmp/report.err"; then
      grep -q "resized: a --resume changed its world size (config.json's segments: N=4 x B=8 from step 1, N=2 x B=16" \
        "$tmp/report.md" || fail "(a) dtbench report does not flag the resized run: $(tail -n 5 "$tmp/report.md")"
    else
      fail "(a) dtbench report on the resized run failed: $(tail -c 400 "$tmp/report.err")"
    fi
  else
    fail "(a) the 2-rank resume exited ${codes[*]}: $(tail -c 600 "$tmp/shrink.resumed.0.err")"
  fi
fi

echo "(b) 2 ranks x 16, SIGTERM, resumed by 4 ranks"
if stopped 2 "$tmp/grow" "${flags[@]}" --batch-size 16; then
  run_world 4 "$tmp/grow.resumed" "${flags[@]}" --batch-size 16 --out "$tmp/grow" --resume
  if [[ ${codes[*]} == "0 0 0 0" ]]; then
    audit_clean "$tmp/grow"
    k=$(py -c 'import json,sys; print(json.load(open(sys.argv[1]))["segments"][1]["first_global_step"] - 1)' "$tmp/grow/config.json")
    if result=$(same_losses "$tmp/grow" "$k" "$tmp/whole2" "$tmp/whole4"); then
      echo "ok: (b) losses: $result"
    else
      fail "(b) $result"
    fi
  else
    fail "(b) the 4-rank resume exited ${codes[*]}: $(tail -c 600 "$tmp/grow.resumed.0.err")"
  fi
fi

echo "(c) refusals, then --allow-global-batch-change"
if [[ -f $tmp/refused/checkpoint/state.json ]]; then
  before=$(unchanged "$tmp/refused")
  # refused CODE PATTERN WORLD ARGS...: rank 0 exits CODE naming PATTERN; the directory is unchanged.
  refused() {
    local code=$1 pattern=$2 world=$3
    shift 3
    run_world "$world" "$tmp/refusal" "$@" --out "$tmp/refused" --resume
    if [[ ${codes[0]} != "$code" ]] || ! grep -Eq -- "$pattern" "$tmp/refusal.0.err"; then
      fail "(c) rank 0 exited ${codes[0]} (want $code and '$pattern'): $(tail -c 500 "$tmp/refusal.0.err")"
    else
      echo "ok: (c) refused: $(grep -Eo -- "$pattern" "$tmp/refusal.0.err" | head -1)"
    fi
    [[ $(unchanged "$tmp/refused") == "$before" ]] || fail "(c) a refused --resume ($pattern) changed the run directory"
  }
  refused 2 "global batch 32 .*does not divide among 3 ranks; resume with 2 or 4 ranks.*--allow-global-batch-change" \
    3 "${flags[@]}" --batch-size 8
  refused 2 "model" 2 "${flags[@]/lenet/resnet18}" --batch-size 8
  mv "$tmp/refused/sample_ledger.rank3.csv" "$tmp/rank3.csv"
  before_missing=$(unchanged "$tmp/refused")
  run_world 2 "$tmp/refusal" "${flags[@]}" --batch-size 8 --out "$tmp/refused" --resume
  grep -q "sample_ledger.rank3.csv is missing" "$tmp/refusal.0.err" && [[ ${codes[0]} != 0 ]] ||
    fail "(c) a missing rank-3 ledger: rank 0 exited ${codes[0]}: $(tail -c 400 "$tmp/refusal.0.err")"
  [[ $(unchanged "$tmp/refused") == "$before_missing" ]] || fail "(c) the refusal of a missing ledger changed the run directory"
  mv "$tmp/rank3.csv" "$tmp/refused/sample_ledger.rank3.csv"

  run_world 3 "$tmp/allowed" "${flags[@]}" --batch-size 8 --out "$tmp/refused" --resume --allow-global-batch-change
  if [[ ${codes[*]} == "0 0 0" ]]; then
    got=$(segments "$tmp/refused")
    [[ $got =~ ^1:4:8:32:0.002\ [0-9]+:3:8:24:0.0015$ ]] ||
      fail "(c) config.json segments '$got' (want the 4-rank one, then 3 ranks x 8, global 24, lr 0.0015)"
    stop_epoch=$refused_epoch
    audit_clean "$tmp/refused"
    echo "ok: (c) --allow-global-batch-change: segments $got"
  else
    fail "(c) the 3-rank resume with --allow-global-batch-change exited ${codes[*]}: $(tail -c 600 "$tmp/allowed.0.err")"
  fi
fi

echo "(d) --sync pairavg at another world size is refused"
if stopped 2 "$tmp/pairavg" "${flags[@]}" --batch-size 8 --sync pairavg; then
  before=$(unchanged "$tmp/pairavg")
  run_world 4 "$tmp/pairavg.resumed" "${flags[@]}" --batch-size 8 --sync pairavg --out "$tmp/pairavg" --resume
  pattern="world_size 4 .*--sync pairavg, whose ranks each keep their own model"
  if [[ ${codes[0]} != 2 ]] || ! grep -Eq -- "$pattern" "$tmp/pairavg.resumed.0.err"; then
    fail "(d) rank 0 exited ${codes[0]} (want 2 and '$pattern'): $(tail -c 500 "$tmp/pairavg.resumed.0.err")"
  else
    echo "ok: (d) refused: $(grep -Eo -- "$pattern" "$tmp/pairavg.resumed.0.err")"
  fi
  [[ $(unchanged "$tmp/pairavg") == "$before" ]] || fail "(d) the refused pairavg --resume changed the run directory"
fi

echo "resize_resume_test: $failures failure(s), total $(( $(date +%s) - start_all ))s"
exit $((failures > 0))
