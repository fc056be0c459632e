#!/usr/bin/env bash
# dtbench sweep with the local launcher, for real: a 2x2 grid (batch x world) of tiny LeNet runs
# completes and is reported; the same sweep again skips every point and re-runs nothing; a point
# whose run was killed is retried with its earlier attempt kept aside (the job table saying that
# attempt died), one failing with a data error is not; --retries is capped; train flags and the data
# folder are checked once before anything runs (a mistyped value, train flags before '--', a missing
# dataset, a sweep directory whose completed runs had other flags); --dry-run runs nothing; usage
# errors exit 2 and leave no directory behind.
# Usage: sweep_local_test.sh path/to/dtbench
set -uo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../../expect_cli.sh"
launcher=(timeout 150)

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

small=(--model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 64 --epochs 2
       --max-steps 3 --threads 1 --quiet)
names=(batch8-world1 batch8-world2 batch16-world1 batch16-world2)
sweep=$tmp/sweep

start=$SECONDS
expect 0 "batch16-world2 +completed" sweep --out "$sweep" --grid batch=8,16 --grid world=1,2 -- "${small[@]}"
echo "first sweep: $((SECONDS - start)) s"
for name in "${names[@]}"; do
  [[ $("$dtbench" status "$sweep/$name" 2>/dev/null) == completed ]] || fail "$name did not complete"
  [[ -s "$sweep/$name.log" ]] || fail "no log $sweep/$name.log"
done
rows=$(tail -n +2 "$sweep/jobs.csv" | grep -c ',completed,')
[[ $rows -eq 4 && $(tail -n +2 "$sweep/jobs.csv" | wc -l) -eq 4 ]] || fail "jobs.csv should hold 4 completed rows: $(cat "$sweep/jobs.csv")"
grep -q "Table 1 — time and speedup" "$sweep/report.md" || fail "report.md has no Table 1"
speedups=$(awk '/^## Table 1/{t=1; next} /^## /{t=0}
  t && /^\| model/ { for (i = 1; i <= split($0, h, "|"); i++) if (h[i] ~ /^ *speedup *$/) s = i }
  t && /^\| lenet/ { split($0, f, "|"); if (s && f[s] ~ /[0-9]\.[0-9]/) n++ } END {print n+0}' "$sweep/report.md")
[[ $speedups -eq 4 ]] || fail "Table 1 in report.md should have 4 rows with a speedup, found $speedups"
grep -q "Table 3" "$sweep/report.md" || fail "report.md lacks Table 3"

before=$(cd "$sweep" && md5sum */summary.json && stat -c '%n %Y' */summary.json && grep -c '^==== dtbench sweep' ./*.log)
expect 0 "batch8-world2 +skipped \(completed\)" sweep --out "$sweep" --grid batch=8,16 --grid world=1,2 -- "${small[@]}"
after=$(cd "$sweep" && md5sum */summary.json && stat -c '%n %Y' */summary.json && grep -c '^==== dtbench sweep' ./*.log)
[[ "$before" == "$after" ]] || fail "the second sweep re-ran something: $before vs $after"
[[ -z $(find "$sweep" -name '*.attempt-*') ]] || fail "the second sweep moved a completed run aside"
second=$("$dtbench" sweep --out "$sweep" --grid batch=8,16 --grid world=1,2 --plots "$tmp/figures" -- "${small[@]}" 2>&1)
[[ $(grep -c 'skipped (completed)' <<<"$second") -eq 4 ]] || fail "expected 4 skipped points: $second"
# --plots draws the report's figures of the sweep's runs, as dtbench report --plots does; a --plots that
# cannot be written is refused before any point runs.
for f in speedup.png compute_comm.png figures.json plots.py; do
  [[ -s $tmp/figures/$f ]] || fail "sweep --plots wrote no $f: $second"
done
echo "not a directory" >"$tmp/plots-file"
expect 2 "--plots: .*plots-file exists and is not a directory" sweep --out "$tmp/never" --grid batch=8 --plots "$tmp/plots-file" -- "${small[@]}"
[[ ! -e "$tmp/never" ]] || fail "a refused --plots left $tmp/never behind"

# A completed point whose config.json no longer reads is no result: it runs again, the damaged run kept aside.
damaged=$tmp/damaged
cp -r "$sweep" "$damaged"
echo '{"model": ' >"$damaged/batch8-world1/config.json"
third=$("$dtbench" sweep --out "$damaged" --grid batch=8,16 --grid world=1,2 -- "${small[@]}" 2>&1)
[[ $(grep -c 'skipped (completed)' <<<"$third") -eq 3 ]] || fail "the damaged point counted as completed: $third"
grep -qE "batch8-world1 +completed" <<<"$third" || fail "the damaged point did not run again: $third"
[[ -d "$damaged/batch8-world1.attempt-1" ]] || fail "the damaged run was not kept aside"

# A data folder without the dataset's files is refused before any point runs (--dry-run too), naming
# the folder and how to fetch the data; with --download the folder must be one the download can write.
bad=$tmp/bad
expect 2 "point dataset_cifar10: --data-dir $tmp/nothing-here holds no complete CIFAR-10: .*data_batch_1.bin is missing; \
fetch it once with .dtbench train --dataset cifar10 --download --data-dir $tmp/nothing-here" \
  sweep --out "$bad" --grid dataset=synthetic,cifar10 -- --model lenet --data-dir "$tmp/nothing-here" --epochs 1
expect 2 "holds no complete CIFAR-10" sweep --dry-run --out "$bad" --grid batch=16 -- --model lenet --dataset cifar10 \
  --data-dir "$tmp/nothing-here"
expect 2 "point batch16: --data-dir $tmp/nothing-here holds no Fashion-MNIST: .*train-images-idx3-ubyte\[.gz\] is missing" \
  sweep --out "$bad" --grid batch=16 -- --model lenet --dataset fashion-mnist --data-dir "$tmp/nothing-here"
echo "a file" >"$tmp/data-file"
expect 2 "--download fetches CIFAR-10 into --data-dir $tmp/data-file/cifar, but $tmp/data-file cannot be written" \
  sweep --out "$bad" --grid batch=16 -- --model lenet --dataset cifar10 --download --data-dir "$tmp/data-file/cifar"
expect 0 "batch16 +run" sweep --dry-run --out "$bad" --grid batch=16 -- --model lenet --dataset cifar10 --download \
  --data-dir "$tmp/new-data"
[[ ! -e "$bad" && ! -e "$tmp/new-data" ]] || fail "a sweep refused for its data (or a dry run) made $bad or $tmp/new-data"

# A point that fails for want of good data (here: CIFAR-10 files that are no CIFAR-10) fails at once, as
# does one with a usage error (exit 2): each would fail the same way again.
damaged_data=$tmp/damaged-data/cifar-10-batches-bin
mkdir -p "$damaged_data"
for f in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do echo "damaged" >"$damaged_data/$f.bin"; done
expect 1 "dataset_cifar10 +failed \(data error\)" sweep --out "$bad" --grid dataset=synthetic,cifar10 --retries 3 -- \
  --model lenet --data-dir "$tmp/damaged-data" --synthetic-train-size 256 --synthetic-test-size 64 --epochs 1 \
  --max-steps 2 --batch-size 16 --threads 1 --quiet
[[ $("$dtbench" status "$bad/dataset_synthetic" 2>/dev/null) == completed ]] || fail "the synthetic point did not complete"
[[ ! -e "$bad/dataset_cifar10.attempt-1" ]] || fail "the point without good data was run again"
[[ $(grep -c '^==== dtbench sweep: dataset_cifar10 attempt' "$bad/dataset_cifar10.log") -eq 1 ]] \
  || fail "the log should hold one attempt of the point without good data"
grep -q "data_batch_1.bin" "$bad/dataset_cifar10.log" || fail "the error is not in the log"
grep -q "^dataset_cifar10,.*,failed,.*data_batch_1.bin" "$bad/jobs.csv" || fail "the error is not in jobs.csv: $(cat "$bad/jobs.csv")"
grep -q "^dataset_synthetic,.*,completed," "$bad/jobs.csv" || fail "jobs.csv lacks the completed synthetic point"

# A point whose run is killed (by a SIGKILL the out-of-memory killer did not send) is retried, its first
# attempt kept aside, and completes.
killed=$tmp/killed
"$dtbench" sweep --out "$killed" --grid batch=8 --retries 1 -- --model lenet --dataset synthetic \
  --synthetic-train-size 4096 --synthetic-test-size 64 --epochs 1 --max-steps 400 --threads 1 --quiet \
  >"$tmp/killed.out" 2>&1 &
sweep_pid=$!
for _ in $(seq 1 300); do [[ $("$dtbench" status "$killed/batch8" 2>/dev/null) == running ]] && break; sleep 0.1; done
pkill -KILL -f -- "--out $killed/batch8( |$)" || fail "found no run of the point to kill"
wait "$sweep_pid"
rc=$?
[[ $rc -eq 0 ]] || fail "the sweep whose run was killed once exited $rc: $(cat "$tmp/killed.out")"
grep -qE "batch8 +failed \(retrying\)" "$tmp/killed.out" || fail "the killed attempt is not shown retrying: $(cat "$tmp/killed.out")"
[[ -d "$killed/batch8.attempt-1" ]] || fail "the killed attempt was not kept aside"
[[ $("$dtbench" status "$killed/batch8" 2>/dev/null) == completed ]] || fail "the retried point did not complete"
# The killed attempt never recorded its end (its summary.json still says running) and no process holds its
# lock: the job table says it failed, and why, never `running`.
grep -qE "^batch8\.attempt-1,.*,failed,died without recording its end" "$killed/jobs.csv" ||
  fail "jobs.csv does not show the killed attempt failed: $(cat "$killed/jobs.csv")"
! grep -q ',running,' "$killed/jobs.csv" || fail "jobs.csv shows a dead run running: $(cat "$killed/jobs.csv")"
expect 2 "--retries is from 0 to 10, got 1000000000" sweep --out "$tmp/r" --grid batch=8 --retries 1000000000 -- "${small[@]}"

# The train flags are checked once, before anything runs: a mistyped value is one usage error naming the
# point, and no point leaves a directory.
usage=$tmp/usage
expect 2 "point model_nosuchmodel: unknown model 'nosuchmodel' \(--model\).*nothing was run" \
  sweep --out "$usage" --grid model=lenet,nosuchmodel --retries 2 -- --dataset synthetic --epochs 1 --max-steps 2 \
  --threads 1 --quiet
[[ ! -e "$usage" ]] || fail "a sweep refused for a mistyped train flag created $usage"
# Train flags before '--': the message says where they go.
expect 2 "Option .model. does not exist; dtbench train's flags go after '--'" sweep --out "$usage" --grid world=1 \
  --model lenet
# The same sweep directory with other train flags: its completed runs are not another sweep's; refused,
# naming the flag, before anything runs.
expect 2 "^  batch8-world2: --max-steps \(max_steps in the run's config.json: 3, now: 4\)" \
  sweep --out "$sweep" --grid batch=8,16 --grid world=1,2 -- "${small[@]/3/4}"

expect 0 "batch8-world2 +run" sweep --dry-run --out "$tmp/dry" --grid batch=8 --grid world=1,2 -- "${small[@]}"
expect 0 "launch -n 2 -- .*train .*--batch-size 8 --out $tmp/dry/batch8-world2" \
  sweep --dry-run --out "$tmp/dry" --grid batch=8 --grid world=1,2 -- "${small[@]}"
[[ ! -e "$tmp/dry" ]] || fail "--dry-run created $tmp/dry"
expect 0 "skip \(completed\)" sweep --dry-run --out "$sweep" --grid batch=8,16 --grid world=1,2 -- "${small[@]}"

expect 2 "--out DIR is required" sweep --grid batch=8 -- "${small[@]}"
expect 2 "grid key 'batch' is given twice" sweep --out "$tmp/u" --grid batch=8 --grid batch=16 -- "${small[@]}"
expect 2 "world needs positive integers, got '0'" sweep --out "$tmp/u" --grid world=0,1 -- "${small[@]}"
expect 2 "batch has no values" sweep --out "$tmp/u" --grid batch= -- "${small[@]}"
expect 2 "train flag --out after -- is set by the sweep" sweep --out "$tmp/u" --grid batch=8 -- --out x
expect 2 "train flag --batch-size after -- is also the grid key 'batch'" sweep --out "$tmp/u" --grid batch=8 -- --batch-size 4
expect 2 "--sbatch-args is for --launcher slurm" sweep --sbatch-args "--time=5" --out "$tmp/u" --grid batch=8 -- "${small[@]}"
expect 2 "--slurm-timeout is for --launcher slurm" sweep --slurm-timeout 5 --out "$tmp/u" --grid batch=8 -- "${small[@]}"
expect 2 "--launcher must be local or slurm, got 'pbs'" sweep --launcher pbs --out "$tmp/u" --grid batch=8 -- "${small[@]}"
expect 2 "--sbatch-args has an unclosed ' quote" \
  sweep --launcher slurm --sbatch-args "--comment='x" --out "$tmp/u" --grid batch=8 -- "${small[@]}"
expect 2 "the grid is empty|give the grid" sweep --out "$tmp/u" -- "${small[@]}"
expect 2 "lr lists 0.1 and 0.10, the same number" sweep --out "$tmp/u" --grid lr=0.1,0.10 -- "${small[@]}"
# Placement on nodes: one node runs here (world = --ranks-per-node), more are for the Slurm launcher.
expect 2 "nodes=2 with --launcher local: .*cannot place ranks on 2 nodes; use --launcher slurm" \
  sweep --out "$tmp/u" --grid nodes=1,2 -- "${small[@]}"
expect 2 "grid keys world and nodes cannot both be given" sweep --out "$tmp/u" --grid world=2 --grid nodes=1 -- "${small[@]}"
expect 2 "--ranks-per-node places ranks on the nodes of a nodes axis" \
  sweep --out "$tmp/u" --ranks-per-node 2 --grid world=2 -- "${small[@]}"
expect 2 "--ranks-per-node must be at least 1" sweep --out "$tmp/u" --ranks-per-node 0 --grid nodes=1 -- "${small[@]}"
expect 2 "nodes needs positive integers, got '0'" sweep --launcher slurm --out "$tmp/u" --grid nodes=0,1 -- "${small[@]}"
# Refusals of the Slurm launcher come before the sweep takes its directory's lock: nothing is left in it.
expect 2 "--gpu-type types the GPUs .* point batch8 runs on the CPU" \
  sweep --launcher slurm --gpu-type a100 --out "$tmp/u" --grid batch=8 -- "${small[@]}"
expect 2 "--slurm-script $tmp/none.sbatch is not a file" \
  sweep --launcher slurm --slurm-script "$tmp/none.sbatch" --out "$tmp/u" --grid batch=8 -- "${small[@]}"
# One '--' too many is named as such.
expect 2 "one '--' too many" sweep --out "$tmp/u" --grid batch=8 -- -- "${small[@]}"
# mode is an axis: a dp point is one dtbench train that sees its world's GPUs.
expect 2 "mode takes ddp or dp, got 'dpp'" sweep --out "$tmp/u" --grid mode=dpp -- "${small[@]}"
[[ ! -e "$tmp/u" ]] || fail "a usage error created $tmp/u"
# A --mode dp point: one dtbench train that sees the GPUs of its world (dp needs a CUDA build of LibTorch).
if "$dtbench" --version | grep -q 'torch_cuda yes'; then
  launcher=(env -u CUDA_VISIBLE_DEVICES timeout 150)
  expect 0 "^  CUDA_VISIBLE_DEVICES=0,1 [^ ]*dtbench train .*--device cuda --mode dp --out $tmp/dry/mode_dp-world2$" \
    sweep --dry-run --out "$tmp/dry" --grid mode=ddp,dp --grid world=1,2 -- "${small[@]}" --device cuda
  launcher=(timeout 150)
fi
expect 0 "launch -n 2 -- .*train .*--out $tmp/dry/nodes1" \
  sweep --dry-run --out "$tmp/dry" --grid nodes=1 --ranks-per-node 2 -- "${small[@]}"
expect 0 "sbatch --parsable --job-name=nodes2 --nodes=2 --ntasks=6 --ntasks-per-node=3 .*--gres=none .*train_multinode.sbatch" \
  sweep --dry-run --launcher slurm --out "$tmp/dry" --grid nodes=1,2 --ranks-per-node 3 -- "${small[@]}" --device cpu
[[ ! -e "$tmp/dry" ]] || fail "--dry-run created $tmp/dry"

echo "sweep_local_test: $((SECONDS - start)) s, $failures failure(s)"
[[ $failures -eq 0 ]]
