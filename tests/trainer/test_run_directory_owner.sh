#!/usr/bin/env bash
# The run directory's owner and a checkpoint that cannot be written (docs/run-directory.md, "The
# lock" and "checkpoint/"), through the dtbench binary:
#  (a) while a run trains, `--resume` into its directory and a second fresh run into it are refused
#      at once naming the owner's pid and host, and the run goes on; once it is SIGKILLed its lock
#      is gone with it: a fresh run is refused because the directory holds a run, and --resume
#      takes over (it trains until SIGTERM stops it with exit 75);
#  (b) two fresh runs started together into one --out: one completes with exactly its own rows, the
#      other is refused with a clear message (no raw rename error);
#  (c) a checkpoint larger than RLIMIT_FSIZE allows (SIGXFSZ ignored: writes fail with EFBIG): exit
#      1 naming the file, summary.json "failed" with the reason, no partial checkpoint left behind;
#  (d) as root with mount namespaces, a real full disk (a tmpfs too small for the checkpoint):
#      the same, and summary.json still says "failed" (skipped otherwise).
# Usage: test_run_directory_owner.sh path/to/dtbench
set -uo pipefail
dtbench=$1
source "$(dirname "$0")/run_helpers.sh"
start_test
host=$(hostname)

synthetic=(train --model lenet --dataset synthetic --synthetic-test-size 64 --threads 1 --workers 0 --quiet --no-eval
           --batch-size 8)


# refused CASE PATTERN ARGS...: `dtbench ARGS` exits 1 within 30 s printing PATTERN (extended regex).
refused() {
  local name=$1 pattern=$2 out rc
  shift 2
  out=$(timeout --kill-after=5 30 "$dtbench" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne 1 ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    fail "$name: exit $rc (want 1 and a message matching '$pattern'): $(head -c 600 <<<"$out")"
  else
    echo "ok: $name: $(grep -E -- "$pattern" <<<"$out" | head -n 1 | head -c 240)"
  fi
}

# ---------------------------------------------------------------------------------------------
echo "(a) --resume and a second run into a directory in use"
a_flags=("${synthetic[@]}" --synthetic-train-size 512 --epochs 1000 --seed 4 --checkpoint-every 4)
dir=$tmp/owned
"$dtbench" "${a_flags[@]}" --out "$dir" >"$tmp/owned.log" 2>&1 &
owner=$!
pids+=("$owner")
if ! wait_rows "$dir" 10 60 "$owner"; then
  fail "(a) the run logged only $(batch_rows "$dir") Batch rows (60 s at most): $(tail -c 400 "$tmp/owned.log")"
else
  in_use="$dir is in use by a running dtbench \\(pid $owner, host $host\\)"
  refused "(a) --resume while it runs" "$in_use" "${a_flags[@]}" --out "$dir" --resume
  refused "(a) a fresh run into it" "$in_use.*(--out|--resume)" "${a_flags[@]}" --out "$dir"
  kill -0 "$owner" 2>/dev/null || fail "(a) the run in the directory ended: $(tail -c 400 "$tmp/owned.log")"
  kill -9 "$owner"
  wait "$owner" 2>/dev/null
  killed_at=$(batch_rows "$dir")
  refused "(a) a fresh run after the owner was killed" "already holds a run.*--resume" "${a_flags[@]}" --out "$dir"
  "$dtbench" "${a_flags[@]}" --out "$dir" --resume >"$tmp/resumed.log" 2>&1 &
  resumed=$!
  pids+=("$resumed")
  if ! wait_rows "$dir" $((killed_at + 4)) 60 "$resumed"; then
    fail "(a) --resume after the kill did not train on: $(tail -c 400 "$tmp/resumed.log")"
  else
    kill -TERM "$resumed"
    finish "$resumed" 30
    status=$(json "$dir/summary.json" status)
    if [[ $rc == 75 && $status == interrupted ]]; then
      echo "ok: (a) after SIGKILL the lock was free: --resume trained on and stopped with 75 on SIGTERM"
    else
      fail "(a) the resumed run exited '$rc' with status '$status' (want 75, interrupted): $(tail -c 400 "$tmp/resumed.log")"
    fi
  fi
fi

# ---------------------------------------------------------------------------------------------
echo "(b) two fresh runs started together into one --out"
b_flags=("${synthetic[@]}" --synthetic-train-size 512 --epochs 2 --seed 5)  # 64 steps per epoch
dir=$tmp/twice
"$dtbench" "${b_flags[@]}" --out "$dir" >"$tmp/twice.1" 2>&1 &
first=$!
"$dtbench" "${b_flags[@]}" --out "$dir" >"$tmp/twice.2" 2>&1 &
second=$!
pids+=("$first" "$second")
finish "$first" 120
rc1=$rc
finish "$second" 120
rc2=$rc
if [[ "$rc1 $rc2" == "0 1" ]]; then loser=$tmp/twice.2; elif [[ "$rc1 $rc2" == "1 0" ]]; then loser=$tmp/twice.1; else
  fail "(b) exit codes $rc1 and $rc2 (want one 0 and one 1): $(tail -c 300 "$tmp/twice.1") / $(tail -c 300 "$tmp/twice.2")"
  loser=
fi
if [[ -n $loser ]]; then
  if grep -q 'rename' "$loser" || ! grep -qE "is in use by a running dtbench \(pid [0-9]+, host $host\)|already holds a run" "$loser"; then
    fail "(b) the refused run's message: $(head -c 600 "$loser")"
  else
    echo "ok: (b) one refused: $(grep -E 'in use|already holds' "$loser" | head -c 200)"
  fi
fi
if check=$(py - "$dir" <<'EOF'
import csv, json, sys
d = sys.argv[1]
rows = [(r["rank"], r["epoch"], r["step"]) for r in csv.DictReader(open(f"{d}/batches.csv"))]
status = json.load(open(f"{d}/summary.json"))["status"]
want = [("0", str(e), str(s)) for e in (1, 2) for s in range(1, 65)]
if status != "completed" or rows != want:
    print(f"status {status!r}, {len(rows)} batches.csv rows, {len(set(rows))} distinct (want completed, 128 in order)")
    sys.exit(1)
print("completed with its 128 rows once each")
EOF
); then echo "ok: (b) the directory holds one run: $check"; else fail "(b) $check"; fi

# ---------------------------------------------------------------------------------------------
# check_failed_checkpoint CASE DIR LOG RC REASON: exit 1 naming rank0.pt and REASON, summary.json
# "failed" with the reason, no partial checkpoint, the rows before the failure kept.
check_failed_checkpoint() {
  local name=$1 dir=$2 log=$3 code=$4 reason=$5
  local status error ok=1
  status=$(json "$dir/summary.json" status)
  error=$(json "$dir/summary.json" error)
  [[ $code == 1 ]] || { fail "$name: exit $code (want 1): $(tail -c 400 "$log")"; ok=0; }
  grep -q "checkpoint.partial/rank0.pt ($reason)" "$log" ||
    { fail "$name: the message does not name rank0.pt and '$reason': $(tail -c 400 "$log")"; ok=0; }
  [[ $status == failed && $error == *"rank0.pt ($reason)"* ]] ||
    { fail "$name: summary.json status '$status', error '${error:0:200}' (want failed, naming rank0.pt)"; ok=0; }
  [[ ! -e $dir/checkpoint.partial && ! -e $dir/checkpoint ]] ||
    { fail "$name: checkpoint files left behind: $(ls "$dir")"; ok=0; }
  [[ $(( $(wc -l <"$dir/batches.csv") - 1 )) -eq 2 ]] ||
    { fail "$name: batches.csv holds $(( $(wc -l <"$dir/batches.csv") - 1 )) rows (want the 2 steps before the checkpoint)"; ok=0; }
  [[ $ok -eq 1 ]] && echo "ok: $name: exit 1, summary.json failed: ${error:0:160}"
}

c_flags=("${synthetic[@]}" --synthetic-train-size 64 --epochs 1 --checkpoint-every 2)

echo "(c) a checkpoint larger than the file size limit"
dir=$tmp/limited
# LeNet's model and momentum take about 0.5 MB; the logs and JSON files of 2 steps a few KiB.
( trap '' XFSZ; ulimit -f 128; exec "$dtbench" "${c_flags[@]}" --out "$dir" ) >"$tmp/limited.log" 2>&1
check_failed_checkpoint "(c)" "$dir" "$tmp/limited.log" $? "File too large"

echo "(d) a full disk while checkpointing"
if [[ $EUID -ne 0 ]] || ! unshare --mount true 2>/dev/null; then
  echo "skipped: (d) needs root and mount namespaces"
else
  dir=$tmp/full/run
  mkdir -p "$tmp/full"
  # The tmpfs exists only inside the new mount namespace; the checks run there too.
  unshare --mount -- bash -c '
    mount -t tmpfs -o size=128k dtbench-full "$1" || exit 99
    "$2" "${@:4}" --out "$3" >"$1.log" 2>&1
    echo $? >"$1.rc"
    cp -r "$3" "$1.copy"' _ "$tmp/full" "$dtbench" "$dir" "${c_flags[@]}"
  if [[ ! -f $tmp/full.rc ]]; then
    fail "(d) could not mount a tmpfs"
  else
    check_failed_checkpoint "(d)" "$tmp/full.copy" "$tmp/full.log" "$(cat "$tmp/full.rc")" "No space left on device"
  fi
fi

echo "run_directory_owner_test: $failures failure(s)"
exit $((failures > 0))
