#!/usr/bin/env bash
# The dtbench binary's exit codes and messages for good and bad command lines.
# Usage: cli_test.sh path/to/dtbench
set -uo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../../expect_cli.sh"

expect 2 "Usage: dtbench" 
expect 0 "models +list the model zoo" --help
expect 2 "unknown subcommand 'fly'.*train, models" fly
expect 0 "resnet18 +11173962 +62 +44\.70" models
expect 0 "lenet +62006 +10" models
expect 0 "--batch-size" train --help
expect 2 "--batch-size must be from 1 to 2147483647, got 0" train --batch-size 0 --out "$tmp/a"
expect 2 "--batch-size must be from 1 to 2147483647, got 3000000000" train --batch-size 3000000000 --out "$tmp/a"
expect 2 "--lr must be a finite number > 0, got -1" train --lr -1 --out "$tmp/a"
expect 2 "unknown model 'resnet19'.*resnet18" train --model resnet19 --out "$tmp/a"
expect 2 "unknown optimizer 'lamb'.*sgd, adam, rmsprop" train --optimizer lamb --out "$tmp/a"
expect 2 "--out is required" train --dataset synthetic
# A DTBENCH_CLUSTER naming a bad file is refused before any run directory is made.
echo '{"nodes": [{"name": "node1"}]}' >"$tmp/cluster.json"
DTBENCH_CLUSTER=$tmp/cluster.json expect 2 "DTBENCH_CLUSTER: .*link_rate_bps" train --dataset synthetic --out "$tmp/cluster-run"
[[ ! -e $tmp/cluster-run ]] || { echo "FAIL: a refused DTBENCH_CLUSTER left $tmp/cluster-run behind"; failures=$((failures + 1)); }
expect 1 "cifar-10-batches-bin.*--dataset synthetic" train --dataset cifar10 --data-dir "$tmp/nothing-here" --out "$tmp/b"
[[ ! -e "$tmp/b/summary.json" ]] || { echo "FAIL: a run without data left a summary" >&2; failures=$((failures + 1)); }
expect 1 "train-images-idx3-ubyte.*dataset-fashion-mnist" train --dataset fashion-mnist --data-dir "$tmp/nothing-here" --out "$tmp/b"
expect 2 "--workers must be in \[0, 64\]" train --workers -1 --out "$tmp/a"
expect 2 "--cudnn-benchmark needs a value before --out" train --cudnn-benchmark --out "$tmp/a"
expect 2 "--synthetic-train-size 9000000000000000000 and --synthetic-test-size 64: the synthetic images take .* GiB in memory" \
  train --dataset synthetic --synthetic-train-size 9000000000000000000 --synthetic-test-size 64 --out "$tmp/huge"
[[ ! -e "$tmp/huge" ]] || { echo "FAIL: the refused dataset size left $tmp/huge behind" >&2; failures=$((failures + 1)); }
expect 2 "--data-on-device needs a CUDA device" train --data-on-device --dataset synthetic --out "$tmp/a"
if [[ ! -e /dev/nvidia0 ]]; then  # no GPU here: --device cuda passes validation, the trainer refuses (exit 1)
  # Each says what this command can do instead, in its own flags.
  expect 1 "--data-on-device needs a GPU, and no GPU is visible.*leave out --data-on-device and --device cuda" \
    train --data-on-device --device cuda --dataset synthetic --out "$tmp/a"
  expect 1 "--device cuda needs a GPU, and no GPU is visible.*use --device cpu" train --device cuda --dataset synthetic --out "$tmp/a"
  if [[ $("$dtbench" --version) != *"(CUDA none"* ]]; then
    expect 1 "--mode dp needs a GPU, and no GPU is visible.*one process per rank on the CPU" \
      train --mode dp --device cuda --dataset synthetic --out "$tmp/a"
  fi
fi

# Bad values name their flag; empty values and thread counts beyond the cores are refused.
expect 2 "--lr takes a finite number.*got 'nan'" train --lr nan --out "$tmp/a"
expect 2 "--weight-decay takes a finite number.*got 'inf'" train --weight-decay inf --out "$tmp/a"
expect 2 "--download-url needs a value" train --download-url "" --out "$tmp/a"
expect 2 "--data-dir needs a value" train --data-dir "" --out "$tmp/a"
cores=$(nproc)
expect 2 "--threads must be in \[0, $cores\].*got 100000" train --threads 100000 --dataset synthetic --out "$tmp/a"
expect 2 "--threads must be in \[0, $cores\]" train --threads $((cores + 1)) --dataset synthetic --out "$tmp/a"
expect 2 "--gloo-threads must be in \[1, 64\], got 100000" train --gloo-threads 100000 --dataset synthetic --out "$tmp/a"
[[ ! -e "$tmp/a" ]] || { echo "FAIL: a usage error created $tmp/a" >&2; failures=$((failures + 1)); }

# An unknown --backend or --topology is refused by every rank before it meets the others (rank 1
# would otherwise wait for rank 0 at the rendezvous) and before anything is written.
for rank in 0 1; do
  launcher=(env RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 timeout 60)
  expect 2 "unknown backend 'foo'" train --backend foo --dataset synthetic --out "$tmp/rank$rank"
  expect 2 "unknown topology 'foo'" train --topology foo --dataset synthetic --out "$tmp/rank$rank"
  [[ ! -e "$tmp/rank$rank" ]] || { echo "FAIL: rank $rank wrote $tmp/rank$rank" >&2; failures=$((failures + 1)); }
done
launcher=(timeout 120)

small=(--model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 100 --batch-size 64
       --epochs 1 --threads 1 --quiet)
expect 0 "status completed" train "${small[@]}" --out "$tmp/run"
expect 1 "already holds a run" train "${small[@]}" --out "$tmp/run"
# --phase-timing none: the untimed phases are "-" on stdout (they were "nan"), and timeline.json shows the
# step's compute as one span, no phase batches.csv leaves empty.
untimed=$("$dtbench" train "${small[@]}" --phase-timing none --timeline --out "$tmp/untimed" 2>&1)
if grep -qi "nan" <<<"$untimed" || ! grep -qE "^ +1 +4 .* - +- +- " <<<"$untimed"; then
  echo "FAIL: --phase-timing none printed: $untimed" >&2
  failures=$((failures + 1))
fi
/usr/bin/python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
names = {e.get("name") for e in events if e.get("cat") == "step"}
assert names and not names & {"h2d", "forward", "backward", "optimizer"}, names
assert "compute (phases not timed)" in names, names' "$tmp/untimed/timeline.json" ||
  { echo "FAIL: --phase-timing none timeline.json holds phase spans" >&2; failures=$((failures + 1)); }
echo "not a directory" > "$tmp/file"
expect 1 "cannot create run directory" train "${small[@]}" --out "$tmp/file/run"

# --amp and --channels-last: the refused combinations, then a short resnet18 run in bf16 and NHWC.
expect 2 "unknown mixed-precision mode 'fp8' \(--amp\).*off, bf16, fp16" train --amp fp8 --dataset synthetic --out "$tmp/a"
expect 2 "--amp fp16 needs --device cuda.*--amp bf16 on the CPU, or fp16 on a GPU" \
  train --amp fp16 --dataset synthetic --out "$tmp/a"
amp=(--model resnet18 --dataset synthetic --synthetic-train-size 32 --synthetic-test-size 16 --batch-size 8
     --max-steps 2 --epochs 1 --threads 1 --quiet)
expect 0 "status completed" train "${amp[@]/resnet18/lenet}" --channels-last --out "$tmp/lenet-nhwc"
expect 0 "status completed" train "${amp[@]}" --amp bf16 --channels-last --out "$tmp/amp"
for pattern in '"amp": "bf16"' '"channels_last": true'; do
  grep -qF "$pattern" "$tmp/amp/config.json" || { echo "FAIL: config.json lacks $pattern" >&2; failures=$((failures + 1)); }
done
for pattern in '"amp": "bf16"' '"loss_scale": null' '"status": "completed"'; do
  grep -qF "$pattern" "$tmp/amp/summary.json" || { echo "FAIL: summary.json lacks $pattern" >&2; failures=$((failures + 1)); }
done

# Values past what a duration can hold are refused, naming the range (not an overflowed "-9223372036854775808ms"
# or "SIGKILL after -2147483.3 s").
expect 2 "--timeout must be a number of seconds from 0.001 to 2592000" train --timeout 1e300 --dataset synthetic --out "$tmp/a"
expect 2 "--timeout must be a number of seconds from 0.001 to 2592000" train --timeout 1e-6 --dataset synthetic --out "$tmp/a"
expect 2 "--grace needs a whole number from 1 to 86400, got '2147484'" launch --grace 2147484 -n 1 -- /bin/true
expect 2 "--master-port needs a whole number from 1 to 65535, got '70000'" launch --master-port 70000 -n 1 -- /bin/true
# Help texts print one "Usage:" (cxxopts' own), the forms above it as "Synopsis:".
for subcommand in sweep report predict; do
  n=$("$dtbench" $subcommand --help | grep -c '^Usage:')
  [[ $n -eq 1 ]] || { echo "FAIL: dtbench $subcommand --help prints 'Usage:' $n times" >&2; failures=$((failures + 1)); }
done

echo "cli_test: $failures failure(s)"
exit $((failures > 0))
