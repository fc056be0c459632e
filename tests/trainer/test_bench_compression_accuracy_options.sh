#!/usr/bin/env bash
# scripts/bench_compression_accuracy.py checks every setting before it trains: a bad --epochs, --lr,
# --batch, --rank or --start (as for --seeds, --world, --compress and --sides) is exit 1 with a message
# naming the flag and what it takes, no traceback, and nothing made under --out. The edge values that
# dtbench train takes pass through to it: a stand-in dtbench (it records its command line and writes a
# completed run's summary.json) stands for the training, so nothing trains and no torch is imported.
# Usage: test_bench_compression_accuracy_options.sh REPO DTBENCH
set -uo pipefail
repo=$(realpath "$1")
REAL_DTBENCH=$(realpath "${2:?usage: $0 REPO DTBENCH}")
export REAL_DTBENCH
python=$(command -v python3) || { echo "skipped: no python3 on PATH" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
cat >"$tmp/dtbench" <<'EOF'
#!/usr/bin/env bash
# Stand-in for `dtbench launch -n N -- dtbench train ... --out DIR`: one completed epoch in DIR; `dtbench
# status` is the real one's.
[[ $1 == status ]] && exec "$REAL_DTBENCH" "$@"
echo "$*" >>"$(dirname "$0")/commands"
while (($#)); do [[ $1 == --out ]] && out=$2; shift; done
mkdir -p "$out"
echo '{"status": "completed", "epochs": [{"train_loss": 1.5, "test_accuracy": 0.5}]}' >"$out/summary.json"
EOF
chmod +x "$tmp/dtbench"
bench() {
  "$python" "$repo/scripts/bench_compression_accuracy.py" --dtbench "$tmp/dtbench" --data-dir "$tmp/data" \
    --sides dtbench --world 2 --seeds 1 "$@"
}

while IFS='|' read -r flag value says; do
  rm -rf "$tmp/out"
  bench --out "$tmp/out" --compress powersgd "$flag" "$value" >"$tmp/log" 2>&1
  rc=$?
  [[ $rc -eq 1 ]] || fail "$flag $value: exit $rc, want 1: $(cat "$tmp/log")"
  grep -qF -- "$flag: $says" "$tmp/log" || fail "$flag $value: the message does not say '$flag: $says': $(cat "$tmp/log")"
  grep -q Traceback "$tmp/log" && fail "$flag $value: a traceback: $(cat "$tmp/log")"
  [[ ! -e $tmp/out && ! -e $tmp/commands ]] || fail "$flag $value: something ran or was made before the check"
done <<'EOF'
--epochs|0|1 or more, got 0
--lr|0|a finite number > 0, got 0.0
--lr|-0.1|a finite number > 0, got -0.1
--lr|nan|a finite number > 0, got nan
--batch|0|from 1 to 2147483647 per rank, got 0
--rank|0|PowerSGD's rank, from 1 to 1024, got 0
--rank|1025|PowerSGD's rank, from 1 to 1024, got 1025
--start|1|PowerSGD's first compressed step, 2 or more
EOF

# The edge values dtbench takes reach it, and the table is written.
bench --out "$tmp/ok" --compress none,powersgd --epochs 1 --lr 1e-9 --batch 1 --rank 1024 --start 2 >"$tmp/log" 2>&1 ||
  fail "edge values: exit $?: $(cat "$tmp/log")"
grep -q -- '--epochs 1 --lr 1e-09 .*--batch-size 1 .*--compress powersgd .*--compress-rank 1024 --compress-start 2' \
  "$tmp/commands" 2>/dev/null || fail "edge values: dtbench did not get them: $(cat "$tmp/commands" 2>/dev/null)"
[[ -f $tmp/ok/accuracy.md ]] || fail "edge values: no accuracy.md"
[[ $status -eq 0 ]] && echo "ok: bad --epochs, --lr, --batch, --rank and --start refused before training; edge values pass"
exit $status
