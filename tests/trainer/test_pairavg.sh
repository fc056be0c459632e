#!/usr/bin/env bash
# --sync pairavg over 4 gloo ranks (LeNet on Fashion-MNIST, 2 epochs x 30 steps): the loss falls,
# and traffic.csv's counted bytes are whole models: each step a perfect matching pairs the 4 ranks
# and every rank sends its flat model (float32 parameters; LeNet has no floating buffers) to its
# partner once, so every rank sends and receives steps x model bytes and the total is
# steps x 4 x model bytes. --check-every with pairavg is a usage error. A 2-rank run stopped by
# SIGTERM resumes (every rank gets its own model back) and ends equal to the run without the stop.
# Usage: tests/trainer/test_pairavg.sh path/to/dtbench
set -uo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
start_all=$(date +%s)

flags=(train --model lenet --dataset fashion-mnist --sync pairavg --batch-size 16 --epochs 2 --max-steps 30
       --lr 0.05 --seed 1 --threads 1 --workers 0 --quiet --no-eval --timeout 30)

echo "checking: 4 gloo ranks, --sync pairavg, 2 epochs x 30 steps"
out=$(timeout --kill-after=10 180 "$dtbench" launch -n 4 --grace 2 -- "$dtbench" "${flags[@]}" --out "$tmp/run" 2>&1)
rc=$?
if [[ $rc -ne 0 ]]; then
  fail "the pairavg run exited $rc:"; echo "$out" | tail -n 20 >&2
else
  if result=$(/usr/bin/python3 - "$tmp/run" 4 60 <<'EOF'
import collections, csv, json, sys
run_dir, world, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
problems = []
summary = json.load(open(f"{run_dir}/summary.json"))
config = json.load(open(f"{run_dir}/config.json"))
if summary.get("status") != "completed":
    problems.append(f"status {summary.get('status')!r}")
if config.get("sync") != "pairavg" or config.get("world_size") != world:
    problems.append(f"config.json sync {config.get('sync')!r}, world_size {config.get('world_size')!r}")

# The loss falls: epoch 2's mean below epoch 1's, and rank 0's last 10 batches below its first 10.
losses = [e["train_loss"] for e in summary.get("epochs", [])]
if len(losses) != 2 or not losses[1] < losses[0]:
    problems.append(f"epoch train_loss {losses} does not fall")
with open(f"{run_dir}/train_history.log", newline="") as f:
    batch = [float(r["Loss"]) for r in csv.DictReader(f) if r["Type"] == "Batch"]
if len(batch) != steps:
    problems.append(f"train_history.log has {len(batch)} Batch rows (want {steps})")
elif not sum(batch[-10:]) / 10 < sum(batch[:10]) / 10:
    problems.append(f"the last 10 batch losses (mean {sum(batch[-10:]) / 10:.4f}) are not below the first 10 "
                    f"(mean {sum(batch[:10]) / 10:.4f})")

# Counted traffic: whole models, a perfect matching every step.
model_bytes = 4 * config["model_parameters"]
with open(f"{run_dir}/traffic.csv", newline="") as f:
    counted = [(int(r["src"]), int(r["dst"]), int(r["bytes"])) for r in csv.DictReader(f) if r["kind"] == "counted"]
if not counted:
    problems.append("traffic.csv has no counted rows")
partial = [(s, d, b) for s, d, b in counted if b % model_bytes]
if partial:
    problems.append(f"counted rows not a multiple of the model's {model_bytes} bytes: {partial[:4]}")
sent, recv, edge = collections.Counter(), collections.Counter(), {}
for s, d, b in counted:
    sent[s] += b
    recv[d] += b
    edge[(s, d)] = edge.get((s, d), 0) + b
total = sum(b for _, _, b in counted)
if total != steps * world * model_bytes:
    problems.append(f"counted bytes total {total} (want {steps} steps x {world} ranks x {model_bytes} = "
                    f"{steps * world * model_bytes})")
for r in range(world):
    if sent[r] != steps * model_bytes or recv[r] != steps * model_bytes:
        problems.append(f"rank {r} sent {sent[r]} and received {recv[r]} counted bytes "
                        f"(want {steps} x {model_bytes} each: one partner per step)")
asym = [(s, d) for (s, d), b in edge.items() if edge.get((d, s)) != b]
if asym:
    problems.append(f"pairs exchanged unequal bytes: {[(s, d, edge[(s, d)], edge.get((d, s))) for s, d in asym][:4]}")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"train_loss {losses[0]:.4f} -> {losses[1]:.4f}; counted bytes {total} = {steps} x {world} x {model_bytes} "
      f"over {len(edge)} directed pairs")
EOF
  ); then
    echo "ok: $result"
  else
    fail "pairavg run: $result"
  fi
fi

echo "checking: --check-every with --sync pairavg is a usage error"
out=$(timeout --kill-after=10 60 "$dtbench" "${flags[@]}" --check-every 1 --out "$tmp/check" 2>&1)
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q -- '--check-every' <<<"$out"; then
  fail "--check-every 1 --sync pairavg -> exit $rc (want 2 and a message naming --check-every): $out"
else
  echo "ok: exit 2: $out"
fi
[[ ! -e $tmp/check/summary.json ]] || fail "the refused --check-every run left a summary.json"

echo "checking: a 2-rank pairavg run stopped by SIGTERM resumes and equals the run without the stop"
resume_flags=(train --model lenet --dataset synthetic --synthetic-train-size 20000 --synthetic-test-size 0
              --sync pairavg --batch-size 16 --epochs 1 --lr 0.05 --seed 2 --threads 1 --workers 0 --quiet --no-eval
              --timeout 30)
"$dtbench" launch -n 2 --grace 2 -- "$dtbench" "${resume_flags[@]}" --out "$tmp/stopped" >"$tmp/stopped.log" 2>&1 &
launcher=$!
for _ in $(seq 1 150); do
  grep -qs '"status": "running"' "$tmp/stopped/summary.json" && break
  sleep 0.2
done
sleep 1
kill -TERM "$launcher"
wait "$launcher"
rc=$?
if [[ $rc -ne 75 ]]; then
  fail "the stopped pairavg run exited $rc (want 75, stopped by SIGTERM): $(tail -n 5 "$tmp/stopped.log")"
else
  timeout --kill-after=10 120 "$dtbench" launch -n 2 --grace 2 -- "$dtbench" "${resume_flags[@]}" --out "$tmp/stopped" \
    --resume >"$tmp/resumed.log" 2>&1
  rc=$?
  timeout --kill-after=10 120 "$dtbench" launch -n 2 --grace 2 -- "$dtbench" "${resume_flags[@]}" --out "$tmp/whole" \
    >"$tmp/whole.log" 2>&1
  whole_rc=$?
  if [[ $rc -ne 0 || $whole_rc -ne 0 ]]; then
    fail "--resume exited $rc, the uninterrupted run $whole_rc: $(tail -n 5 "$tmp/resumed.log")"
  elif result=$(/usr/bin/python3 - "$tmp/stopped" "$tmp/whole" <<'EOF'
import json, sys
resumed, whole = (json.load(open(f"{d}/summary.json")) for d in sys.argv[1:3])
problems = []
if resumed.get("status") != "completed" or not resumed.get("resumed_at"):
    problems.append(f"the resumed run's status {resumed.get('status')!r}, resumed_at {resumed.get('resumed_at')!r}")
if resumed.get("param_checksums") != whole.get("param_checksums"):
    problems.append(f"every rank's parameter checksum {resumed.get('param_checksums')} differs from the "
                    f"uninterrupted run's {whole.get('param_checksums')}")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"resumed; per-rank checksums equal the uninterrupted run's: {resumed['param_checksums']}")
EOF
  ); then
    echo "ok: $result"
  else
    fail "pairavg resume: $result"
  fi
fi

echo "pairavg_test: $failures failure(s), total $(( $(date +%s) - start_all ))s"
exit $((failures > 0))
