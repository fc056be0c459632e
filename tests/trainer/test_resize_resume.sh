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
#      dtbench report shows the run a segment a row, in the batch-time table too (each segment's own rows of
#      its last epoch), and the job table lists it once, its configuration ending with "resized: ...";
#  (b) the same, 2 ranks resumed by 4;
#  (c) refusals before training that leave the run directory as it was: 3 ranks (32 does not divide:
#      exit 2 naming 2 or 4 ranks and --allow-global-batch-change), a rank's sample ledger missing, another
#      model; then 3 ranks with --allow-global-batch-change train to the end, recording 8 per rank, global
#      batch 24 and lr 0.002 x 24/32 = 0.0015, and audit clean;
#  (d) --sync pairavg stopped at 2 ranks and resumed by 4 is refused (exit 2, naming why), the run
#      directory as it was;
#  (e) inside one epoch (2400 samples, global batch 12, a checkpoint every 4 steps): 4 ranks x 3 stopped by
#      SIGTERM, 3 ranks x 4 stopped by SIGTERM, 6 ranks x 2 to the end: audit clean, the epoch in 3 segments;
#      every segment's resize latency in config.json, summary.json and state.json, consistent with
#      train_history.log and the times the test relaunched; dtbench report's Table 1 a row per segment;
#  (f) 4 ranks x 3 with rank 2 killed by SIGKILL mid-epoch, resumed by 2 ranks x 6 from the last checkpoint:
#      the second segment starts after the checkpoint's step, audit clean, the latency consistent;
#  (g) other backends and topologies, (e)'s flags (200 steps of global batch 12): mpi/native
#      4 -> 2 ranks and mpi/ring 2 -> 4 (under mpirun), gloo/tree 4 -> 2, gloo/star 2 -> 4 and
#      gloo/hierarchical with --ranks-per-host 2, 4 -> 2: each stopped by SIGTERM once a checkpoint holds step
#      8 and resumed at the other world: two segments, audit clean, rank 0's loss of every step equal to the
#      uninterrupted gloo/native run's of the step's world (1e-5 relative), param_checksum equal to theirs.
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
# audited DIR: runs dtbench audit on DIR, shows its output (in `out`), and fails unless it exited 0.
audited() {
  local code
  out=$("$dtbench" audit "$1" 2>&1)
  code=$?
  echo "$out" | sed 's/^/    /'
  [[ $code == 0 ]] || { fail "$1: dtbench audit exited $code (want 0)"; return 1; }
}

# audit_clean DIR: dtbench audit exits 0, every epoch ok with 0 duplicates and 0 missing, and the stopped
# epoch (`stop_epoch`) trained by 2 segments.
audit_clean() {
  audited "$1" || return
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

# same_losses RESIZED STEP BEFORE AFTER [STEPS]: rank 0's loss of every step of RESIZED (train_history.log)
# equals BEFORE's up to global step STEP and AFTER's later, to 1e-5 relative; each run has STEPS steps (256).
same_losses() {
  py - "$@" <<'EOF'
import csv, sys
def losses(d):
    with open(f"{d}/train_history.log", newline="") as f:
        return {int(r["Step"]): float(r["Loss"]) for r in csv.DictReader(f) if r["Type"] == "Batch"}
run, at, before, after = losses(sys.argv[1]), int(sys.argv[2]), losses(sys.argv[3]), losses(sys.argv[4])
want = int(sys.argv[5]) if len(sys.argv) > 5 else 256
if sorted(run) != sorted(before) or sorted(run) != sorted(after) or len(run) != want:
    print(f"the runs' steps differ: {len(run)}, {len(before)} and {len(after)} (want {want} each)"); sys.exit(1)
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
    # dtbench report shows the resized run a segment a row (its setup says which).
    if "$dtbench" report "$tmp/shrink" >"$tmp/report.md" 2>"$tmp/report.err"; then
      for seg in "1/2 of shrink, global batch 32" "2/2 of shrink, global batch 32"; do
        grep -q "segment $seg" "$tmp/report.md" ||
          fail "(a) dtbench report has no row of segment $seg: $(head -c 1500 "$tmp/report.md")"
      done
    else
      fail "(a) dtbench report on the resized run failed: $(tail -c 400 "$tmp/report.err")"
    fi
    # The batch-time table a row per segment, each over its own world's rows of its last epoch; the job table
    # one row, saying it was resized.
    "$dtbench" report --format csv --table batch_times "$tmp/shrink" >"$tmp/batch_times.csv" 2>>"$tmp/report.err"
    py - "$tmp/batch_times.csv" "$k" <<'EOF' || fail "(a) the batch-time table is not a row per segment: $(cat "$tmp/batch_times.csv")"
import csv, sys
k = int(sys.argv[2])
got = [(r["id"], r["N"], r["epoch"], r["batches"]) for r in csv.DictReader(open(sys.argv[1]))]
want = [("shrink segment 1/2", "4", str(1 + (k - 1) // 128), str(4 * (k - 128 * ((k - 1) // 128)))),
        ("shrink segment 2/2", "2", "2", str(2 * (256 - max(k, 128))))]
assert got == want, (got, want)
print("ok: (a) batch times", got)
EOF
    "$dtbench" report --format csv --table jobs "$tmp/shrink" >"$tmp/jobs.csv" 2>>"$tmp/report.err"
    py - "$tmp/jobs.csv" "$k" <<'EOF' || fail "(a) the job table does not list the run once as resized: $(cat "$tmp/jobs.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1 and rows[0]["id"] == "shrink" and rows[0]["ranks"] == "4", rows
want = f"resized: N=4 x B=8 from step 1, N=2 x B=16 from step {int(sys.argv[2]) + 1}"
assert rows[0]["configuration"].endswith(want), (rows[0]["configuration"], want)
print("ok: (a) job table:", rows[0]["configuration"])
EOF
    # traffic.csv holds the 2-rank launch's bytes (summary.json's traffic_first_step): the traffic table takes
    # that launch's world and the byte model over its steps only, which native gloo's modelled bytes equal.
    "$dtbench" report --format csv --table traffic "$tmp/shrink" >"$tmp/traffic.csv" 2>>"$tmp/report.err"
    py - "$tmp/traffic.csv" "$tmp/shrink/summary.json" "$k" <<'EOF' || fail "(a) the traffic table is not the last launch's: $(cat "$tmp/traffic.csv")"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
first = json.load(open(sys.argv[2])).get("traffic_first_step")
assert first == int(sys.argv[3]) + 1, ("traffic_first_step", first, int(sys.argv[3]) + 1)
assert len(rows) == 1 and rows[0]["id"] == "shrink" and rows[0]["N"] == "2", rows
assert abs(float(rows[0]["counted_over_expected"]) - 1.0) < 1e-3, rows
print("ok: (a) traffic:", {c: rows[0][c] for c in ("N", "expected_bytes", "counted_bytes", "counted_over_expected")})
EOF
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

# ---------------------------------------------------------------------------------------------
# (e) and (f): inside one epoch, global batch 12 (4 x 3, 3 x 4, 2 x 6, 6 x 2), 2400 samples (200 steps), a
# checkpoint every 4 steps, so that a stop can wait for rows on the disk and still fall inside the epoch.
small=(train --model lenet --dataset synthetic --synthetic-train-size 2400 --synthetic-test-size 16 --threads 1
       --workers 0 --device cpu --quiet --no-eval --epochs 1 --seed 5 --lr 0.002 --momentum 0 --timeout 30
       --sample-ledger --checkpoint-every 4)

# checkpointed DIR STEP SECONDS PID: waits until DIR's checkpoint holds global step STEP or later; fails after
# SECONDS or once PID (rank 0) has ended.
checkpointed() {
  local at
  for _ in $(seq 1 $(($3 * 20))); do
    at=$(json "$1/checkpoint/state.json" global_step)
    [[ -n $at && $at -ge $2 ]] && return 0
    kill -0 "$4" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# in_epoch DIR: 0 when DIR's checkpoint is inside the run's one epoch (200 steps).
in_epoch() {
  local done_steps
  done_steps=$(py -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["epoch"], s["steps_done"])' \
    "$1/checkpoint/state.json" 2>/dev/null)
  echo "    $1 checkpoint at (epoch, steps done) = ($done_steps)"
  [[ $done_steps =~ ^1\ [1-9][0-9]*$ ]] && (( ${done_steps#* } < 200 ))
}

# sigterm_at WORLD DIR STEP ARGS...: WORLD ranks (a fresh run, or --resume in ARGS) stopped by SIGTERM once
# DIR's checkpoint holds step STEP; 0 when every rank exited 75 inside the epoch.
sigterm_at() {
  local world=$1 dir=$2 step=$3 port first ok=0
  shift 3
  port=$(( 20000 + RANDOM % 20000 ))
  first=${#pids[@]}
  for ((r = 0; r < world; r++)); do start_rank $r "$world" $port "$dir.$world.log.$r" "$@" --out "$dir"; done
  if ! checkpointed "$dir" "$step" 120 "${pids[first]}"; then
    fail "$dir: no checkpoint of step $step at $world ranks: $(tail -c 400 "$dir.$world.log.0.err")"
    for p in "${pids[@]:first}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    return 1
  fi
  for ((r = 0; r < world; r++)); do kill -TERM "${pids[first + r]}"; done
  for ((r = 0; r < world; r++)); do
    finish "${pids[first + r]}" 60
    [[ $rc == 75 ]] || { fail "$dir: rank $r of $world exited '$rc' on SIGTERM (want 75)"; ok=1; }
  done
  in_epoch "$dir" || { fail "$dir: the stop at $world ranks is not inside the epoch"; ok=1; }
  return $ok
}

# one_epoch_clean DIR SEGMENTS: dtbench audit exits 0, its one epoch ok with 0 duplicates and 0 missing,
# trained by SEGMENTS segments.
one_epoch_clean() {
  audited "$1" || return
  py -c '
import sys
rows = [l.split() for l in sys.stdin.read().splitlines() if l.strip()[:1].isdigit()]
assert len(rows) == 1, rows
epoch, expected, seen, dups, missing, dropped, padded, ranks, segs, status = rows[0][:10]
assert (dups, missing, status, segs) == ("0", "0", "ok", sys.argv[1]) and expected == seen, rows[0]
' "$2" <<<"$out" || fail "$1: the audit is not one epoch ok with 0 duplicates and 0 missing in $2 segments"
}

# latency_consistent DIR RESUMED_AT...: every segment after the first records its resize latency in config.json,
# summary.json and the checkpoint's state.json alike: previous_step_at is the Timestamp of train_history.log's
# Batch row of the step before the segment, first_step_at is after the test started that resume (RESUMED_AT,
# in order) and before the segment's first step's row, and resize_latency_s is their difference, > 0.
latency_consistent() {
  py - "$@" <<'EOF'
import csv, json, sys
d, started = sys.argv[1], [float(t) for t in sys.argv[2:]]
at = {}
with open(f"{d}/train_history.log", newline="") as f:
    for r in csv.DictReader(f):
        if r["Type"] == "Batch": at[int(r["Step"])] = float(r["Timestamp"])
config = json.load(open(f"{d}/config.json"))["segments"]
summary = json.load(open(f"{d}/summary.json"))["segments"]
assert summary == config, ("summary.json's segments differ from config.json's", summary, config)
state = json.load(open(f"{d}/checkpoint/state.json"))["segments"]
assert state == config, ("state.json's segments differ from config.json's", state, config)
assert len(config) == len(started) + 1, (len(config), started)
assert "resize_latency_s" not in config[0], config[0]
for s, launched in zip(config[1:], started):
    first = s["first_global_step"]
    prev, start, latency = s["previous_step_at"], s["first_step_at"], s["resize_latency_s"]
    assert abs(prev - at[first - 1]) < 1e-3, (s, at[first - 1])
    assert launched < start < at[first], (s, launched, at[first])
    assert latency > 0 and abs(latency - (start - prev)) < 1e-6, s
    assert latency > launched - prev, (s, launched)
    print(f"segment from step {first}: resize latency {latency:.3f} s "
          f"(the test relaunched {launched - prev:.3f} s after the last kept step)")
EOF
}

echo "(e) 4 ranks x 3, SIGTERM, 3 ranks x 4, SIGTERM, 6 ranks x 2: one epoch, three worlds"
if sigterm_at 4 "$tmp/seq" 8 "${small[@]}" --batch-size 3; then
  sleep 1  # the resize takes at least this
  launched1=$(date +%s.%N)
  if sigterm_at 3 "$tmp/seq" $(( $(json "$tmp/seq/checkpoint/state.json" global_step) + 8 )) "${small[@]}" \
       --batch-size 3 --resume; then
    sleep 1
    launched2=$(date +%s.%N)
    run_world 6 "$tmp/seq.6" "${small[@]}" --batch-size 3 --out "$tmp/seq" --resume
    if [[ ${codes[*]} == "0 0 0 0 0 0" ]]; then
      got=$(segments "$tmp/seq")
      [[ $got =~ ^1:4:3:12:0.002\ [0-9]+:3:4:12:0.002\ [0-9]+:6:2:12:0.002$ ]] ||
        fail "(e) config.json segments '$got' (want 4 x 3, 3 x 4, 6 x 2, global batch 12)"
      one_epoch_clean "$tmp/seq" 3
      if result=$(latency_consistent "$tmp/seq" "$launched1" "$launched2" 2>&1); then
        echo "ok: (e) $result"
      else
        fail "(e) resize latency: $result"
      fi
      # dtbench report: one Table 1 row per segment, each its own N and per-rank batch, marked as a segment.
      if "$dtbench" report --format csv --table time_speedup "$tmp/seq" >"$tmp/seq.report.csv" 2>"$tmp/seq.report.err"; then
        py - "$tmp/seq.report.csv" <<'EOF' || fail "(e) dtbench report's Table 1 is not a row per segment: $(cat "$tmp/seq.report.csv")"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if "segment" in r.get("setup", "")]
got = sorted((r["N"], r["batch"], r["setup"].split("segment ")[1].split(" ")[0]) for r in rows)
assert got == [("3", "4", "2/3"), ("4", "3", "1/3"), ("6", "2", "3/3")], got
for r in rows:
    assert float(r["T_s"]) > 0 and r["basis"].startswith("extrapolated"), r
print("ok: (e) report rows", got)
EOF
      else
        fail "(e) dtbench report failed: $(tail -c 400 "$tmp/seq.report.err")"
      fi
    else
      fail "(e) the 6-rank resume exited ${codes[*]}: $(tail -c 600 "$tmp/seq.6.0.err")"
    fi
  fi
fi

echo "(f) 4 ranks x 3, SIGKILL of rank 2 mid-epoch, resumed by 2 ranks from the last checkpoint"
port=$(( 20000 + RANDOM % 20000 ))
first=${#pids[@]}
for ((r = 0; r < 4; r++)); do start_rank $r 4 $port "$tmp/kill.log.$r" "${small[@]}" --batch-size 3 --out "$tmp/kill"; done
if checkpointed "$tmp/kill" 12 120 "${pids[first]}"; then
  # Rank 2 is this shell's child and not yet waited for: its pid is still its own.
  kill -KILL "${pids[first + 2]}"
  for ((r = 0; r < 4; r++)); do finish "${pids[first + r]}" 90; done
  in_epoch "$tmp/kill" || fail "(f) the last checkpoint before the SIGKILL is not inside the epoch"
  kept=$(json "$tmp/kill/checkpoint/state.json" global_step)
  sleep 1
  launched=$(date +%s.%N)
  run_world 2 "$tmp/kill.2" "${small[@]}" --batch-size 3 --out "$tmp/kill" --resume
  if [[ ${codes[*]} == "0 0" ]]; then
    got=$(segments "$tmp/kill")
    [[ $got == "1:4:3:12:0.002 $((kept + 1)):2:6:12:0.002" ]] ||
      fail "(f) config.json segments '$got' (want '1:4:3:12:0.002 $((kept + 1)):2:6:12:0.002': from the last checkpoint)"
    one_epoch_clean "$tmp/kill" 2
    if result=$(latency_consistent "$tmp/kill" "$launched" 2>&1); then
      echo "ok: (f) $result"
    else
      fail "(f) resize latency: $result"
    fi
  else
    fail "(f) the 2-rank resume after the SIGKILL exited ${codes[*]}: $(tail -c 600 "$tmp/kill.2.0.err")"
  fi
else
  fail "(f) no checkpoint of step 12 at 4 ranks: $(tail -c 400 "$tmp/kill.log.0.err")"
  for p in "${pids[@]:first}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
fi

# ---------------------------------------------------------------------------------------------
# (g): the resize under the mpi backend and dtbench's point-to-point topologies, (e)'s flags (an epoch of 200
# steps at global batch 12), against uninterrupted 4-rank and 2-rank gloo/native runs.

# start_world WORLD LOG ARGS...: WORLD ranks in the background: gloo ranks started here, or with --backend mpi
# in ARGS, by mpirun; `waited` holds the processes to wait for (the ranks, or mpirun).
start_world() {
  local world=$1 log=$2 port r
  shift 2
  if [[ " $* " == *" --backend mpi "* ]]; then
    mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$world" "$dtbench" "$@" >"$log.out" 2>"$log.err" &
    pids+=($!)
    waited=($!)
  else
    port=$(( 20000 + RANDOM % 20000 ))
    for ((r = 0; r < world; r++)); do start_rank $r "$world" $port "$log.$r" "$@"; done
    waited=("${pids[@]: -world}")
  fi
}

# ranks_of: the ranks of the world start_world started last (mpirun's children under mpi).
ranks_of() {
  if [[ ${#waited[@]} == 1 ]]; then pgrep -P "${waited[0]}"; else printf '%s\n' "${waited[@]}"; fi
}

# resized_case NAME FROM TO ARGS...: FROM ranks stopped by SIGTERM once the checkpoint holds step 8, then TO
# ranks resume with the same global batch (12): both launches exit as they should (75, then 0), config.json
# lists the two segments, audit is clean with the epoch in 2 segments, rank 0's losses equal the uninterrupted
# runs' of each step's world, and the final parameters those runs' (param_checksum, 1e-6 relative).
resized_case() {
  local name=$1 from=$2 to=$3 dir=$tmp/$1 code k got
  shift 3
  # 3 ms more a step (seeded, no spread): the epoch outlasts the test's poll for the checkpoint of step 8 on
  # a machine of any speed, so the SIGTERM lands inside it; the losses do not depend on it.
  local run=("${small[@]}" --batch-size $((12 / from)) --inject-step-jitter normal:3:0 "$@" --out "$dir")
  start_world "$from" "$dir.$from" "${run[@]}"
  if ! checkpointed "$dir" 8 120 "${waited[0]}"; then
    fail "(g) $name: no checkpoint of step 8 at $from ranks: $(tail -c 400 "$dir.$from.0.err" "$dir.$from.err" 2>/dev/null)"
    for p in "${waited[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    return
  fi
  kill -TERM $(ranks_of)
  for p in "${waited[@]}"; do
    finish "$p" 60
    [[ $rc == 75 ]] || { fail "(g) $name: exited '$rc' on SIGTERM (want 75)"; return; }
  done
  in_epoch "$dir" || { fail "(g) $name: the stop at $from ranks is not inside the epoch"; return; }
  k=$(json "$dir/checkpoint/state.json" global_step)
  start_world "$to" "$dir.$to" "${run[@]}" --resume
  for p in "${waited[@]}"; do
    finish "$p" 120
    [[ $rc == 0 ]] || { fail "(g) $name: the $to-rank resume exited '$rc': $(tail -c 600 "$dir.$to.0.err" "$dir.$to.err" 2>/dev/null)"; return; }
  done
  got=$(segments "$dir")
  [[ $got == "1:$from:$((12 / from)):12:0.002 $((k + 1)):$to:$((12 / to)):12:0.002" ]] ||
    fail "(g) $name: config.json segments '$got' (want $from ranks from step 1, $to from step $((k + 1)))"
  one_epoch_clean "$dir" 2
  if result=$(same_losses "$dir" "$k" "$tmp/ref$from" "$tmp/ref$to" 200); then
    echo "ok: (g) $name, $from -> $to ranks after step $k: losses $result"
  else
    fail "(g) $name: $result"
  fi
  py -c 'import json, sys
a, b = (json.load(open(f"{d}/summary.json"))["param_checksum"] for d in sys.argv[1:])
assert abs(a - b) <= 1e-6 * abs(b), (a, b)' "$dir" "$tmp/ref2" || fail "(g) $name: param_checksum differs from the uninterrupted run's"
}

echo "(g) mpi and point-to-point topologies: SIGTERM mid-epoch, resumed at another world size"
start_g=$(date +%s)
run_world 4 "$tmp/ref4" "${small[@]}" --batch-size 3 --out "$tmp/ref4"
[[ ${codes[*]} == "0 0 0 0" ]] || fail "(g) the uninterrupted 4-rank run exited ${codes[*]}"
run_world 2 "$tmp/ref2" "${small[@]}" --batch-size 6 --out "$tmp/ref2"
[[ ${codes[*]} == "0 0" ]] || fail "(g) the uninterrupted 2-rank run exited ${codes[*]}"
if command -v mpirun >/dev/null; then
  resized_case mpi-native 4 2 --backend mpi
  resized_case mpi-ring 2 4 --backend mpi --topology ring
else
  echo "    (g) mpi cases skipped: mpirun is not installed"
fi
resized_case gloo-tree 4 2 --topology tree
resized_case gloo-star 2 4 --topology star
resized_case gloo-hierarchical 4 2 --topology hierarchical --ranks-per-host 2
echo "    (g) took $(( $(date +%s) - start_g ))s"

echo "resize_resume_test: $failures failure(s), total $(( $(date +%s) - start_all ))s"
exit $((failures > 0))
