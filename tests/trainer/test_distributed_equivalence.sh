#!/usr/bin/env bash
# Synchronous SGD over 3 ranks with batch 4 each equals 1 rank with batch 12: the sampler shards
# like DistributedSampler, so every step sees the same 12 samples. Checked for every topology with
# overlapped buckets and for native and ring with --no-overlap, over BACKEND (gloo: ranks started by
# dtbench launch, plus once with the rendezvous through a FileStore instead of the TCPStore; mpi:
# started by mpirun): the final param_checksum matches the 1-rank run (relative 1e-5) and every rank
# holds the same parameters (param_checksums identical, --check-every 1 passes). Then a model with
# BatchNorm over 2 ranks, whose rank 0 also writes step_profile.json (check_step_profile.py). The
# gloo ring runs (3 ranks, and resnet18's with BatchNorm buffers) also write --message-log
# (check_message_log.py: gradient sends = counted traffic, every category seen).
# Usage: distributed_equivalence_test.sh path/to/dtbench gloo|mpi
set -uo pipefail
dtbench=$1 backend=${2:-gloo}
case $backend in
  gloo) ;;
  mpi) command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun is not installed"; exit 0; } ;;
  *) echo "usage: $0 path/to/dtbench gloo|mpi" >&2; exit 2 ;;
esac
# ranks N: sets `launch` to the command line that starts N ranks of dtbench over $backend.
ranks() {
  if [[ $backend == gloo ]]; then launch=("$dtbench" launch -n "$1" --grace 2 -- "$dtbench")
  else launch=(mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$1" "$dtbench"); fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
start_all=$(date +%s)

common=(train --model lenet --dataset fashion-mnist --seed 7 --lr 0.05 --epochs 1 --max-steps 4 --no-eval
        --threads 1 --workers 0 --quiet --timeout 30)

# compare REF_DIR RUN_DIR WORLD TOPOLOGY OVERLAP(true|false) RANKS_PER_HOST(K|-) BACKEND: prints one
# line; exits 1 when anything differs.
compare() {
  /usr/bin/python3 - "$@" <<'EOF'
import csv, json, sys
ref_dir, run_dir, world, topology, overlap, ranks_per_host, backend = sys.argv[1:8]
world = int(world)
ref = json.load(open(f"{ref_dir}/summary.json"))
run = json.load(open(f"{run_dir}/summary.json"))
config = json.load(open(f"{run_dir}/config.json"))
problems = []
if run.get("status") != "completed":
    problems.append(f"status {run.get('status')!r} (want 'completed')")
expected = [("world_size", world), ("backend", backend), ("topology", topology), ("overlap", overlap == "true")]
if ranks_per_host != "-":
    expected.append(("ranks_per_host", int(ranks_per_host)))
for key, want in expected:
    if config.get(key) != want:
        problems.append(f"config.json {key} = {config.get(key)!r} (want {want!r})")
# Every rank's device, in rank order: all of them this machine's CPU, under one boot id.
devices = config.get("devices", [])
if len(devices) != world or any(d.get("type") != "cpu" or not d.get("model") for d in devices):
    problems.append(f"config.json devices {devices!r} is not one CPU entry per rank")
elif len({d.get("boot_id") for d in devices}) != 1 or len({d.get("host") for d in devices}) != 1:
    problems.append(f"config.json devices {devices!r}: the ranks of one machine show different boot ids or hosts")
a, b = ref["param_checksum"], run["param_checksum"]
rel = abs(a - b) / max(abs(a), 1e-12)
if rel > 1e-5:
    problems.append(f"param_checksum {b!r} differs from the 1-rank {a!r} (relative {rel:.3g} > 1e-5)")
sums = run.get("param_checksums")
if not isinstance(sums, list) or len(sums) != world:
    problems.append(f"param_checksums {sums!r} is not a list of {world} entries")
elif len(set(sums)) != 1:
    problems.append(f"ranks hold different parameters: param_checksums {sums!r}")
elif sums[0] != b:
    problems.append(f"param_checksums {sums!r} disagree with param_checksum {b!r}")
kinds = {row["kind"] for row in csv.DictReader(open(f"{run_dir}/traffic.csv"))}
want_kind = "modelled" if topology == "native" else "counted"
if kinds != {want_kind}:
    problems.append(f"traffic.csv kinds {sorted(kinds)} (want only {want_kind!r})")
rows = list(csv.DictReader(open(f"{run_dir}/batches.csv")))
if sorted({int(r["rank"]) for r in rows}) != list(range(world)) or len(rows) != 4 * world:
    problems.append(f"batches.csv has {len(rows)} rows of ranks {sorted({r['rank'] for r in rows})} "
                    f"(want 4 steps x {world} ranks)")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"param_checksum {b!r}, relative difference {rel:.2g}, {world} identical rank checksums")
EOF
}

echo "reference: 1 rank, batch 12, 4 steps"
start=$(date +%s)
if ! out=$(timeout --kill-after=10 120 "$dtbench" "${common[@]}" --batch-size 12 --out "$tmp/ref" 2>&1); then
  echo "FAIL: the 1-rank reference run failed:"; echo "$out"; exit 1
fi
ref_sum=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["param_checksum"])' \
            "$tmp/ref/summary.json") || { echo "FAIL: no param_checksum in the reference summary"; exit 1; }
echo "ok: reference param_checksum $ref_sum in $(( $(date +%s) - start ))s"

# name topology overlap extra-flags...
configs=(
  "native      native           true"
  "ring        ring             true"
  "tree        tree             true"
  "bts         binary-tree-star true  --ranks-per-host 2"
  "star        star             true"
  "clique      clique           true"
  "hier        hierarchical     true  --ranks-per-host 2"
  "native-nov  native           false --no-overlap"
  "ring-nov    ring             false --no-overlap"
)
[[ $backend == gloo ]] && configs+=("native-fs   native           true  --store-path $tmp/file-store")
for line in "${configs[@]}"; do
  read -r name topology overlap extra <<<"$line"
  read -ra extra_flags <<<"${extra:-}"
  ranks_per_host=-
  [[ ${extra:-} =~ --ranks-per-host\ ([0-9]+) ]] && ranks_per_host=${BASH_REMATCH[1]}
  message_log=
  if [[ $name == ring && $backend == gloo ]]; then
    message_log=$tmp/messages
    extra_flags+=(--message-log "$message_log")
    extra="${extra:+$extra }--message-log DIR"
  fi
  label="$backend --topology $topology${extra:+ $extra}"
  [[ $overlap == true ]] && label+=" (overlapped buckets)"
  echo "checking: 3 ranks, batch 4, $label"
  start=$(date +%s)
  ranks 3
  out=$(timeout --kill-after=10 120 "${launch[@]}" "${common[@]}" --batch-size 4 \
          --check-every 1 --backend "$backend" --topology "$topology" "${extra_flags[@]}" --out "$tmp/$name" 2>&1)
  rc=$?
  if [[ $rc -ne 0 ]]; then
    fail "$label exited $rc:"; echo "$out" | tail -n 20 >&2; continue
  fi
  if result=$(compare "$tmp/ref" "$tmp/$name" 3 "$topology" "$overlap" "$ranks_per_host" "$backend"); then
    echo "ok: $label in $(( $(date +%s) - start ))s: $result"
  else
    fail "$label: $result"
  fi
  # --message-log: every rank's files; its gradient sends are exactly traffic.csv's counted bytes.
  if [[ -n $message_log ]]; then
    if result=$(/usr/bin/python3 "$(dirname "$0")/check_message_log.py" "$message_log" 3 \
                  --traffic "$tmp/$name/traffic.csv" --category gradients --category initial); then
      echo "ok: $label: message log: $result"
    else
      fail "$label: message log: $result"
    fi
    if ! /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["message_log"] != sys.argv[2])' \
           "$tmp/$name/config.json" "$message_log"; then
      fail "$label: config.json message_log is not $message_log"
    fi
  fi
done

# A model with BatchNorm: rank 0's running statistics are broadcast during backward and adopted after
# it, so every rank ends with the same parameters and buffers (and backward is never disturbed).
echo "checking: 2 ranks, resnet18 (BatchNorm statistics broadcast from rank 0), $backend ring"
start=$(date +%s)
ranks 2
bn_log=()
[[ $backend == gloo ]] && bn_log=(--message-log "$tmp/bn-messages")
out=$(timeout --kill-after=10 120 "${launch[@]}" train --model resnet18 --backend "$backend" \
        --dataset synthetic --synthetic-train-size 64 --synthetic-test-size 0 --batch-size 2 --epochs 1 --max-steps 3 \
        --no-eval --threads 1 --workers 0 --quiet --timeout 30 --check-every 1 --topology ring --out "$tmp/bn" \
        "${bn_log[@]}" 2>&1)
rc=$?
if [[ $rc -ne 0 ]]; then
  fail "resnet18 over 2 ranks exited $rc:"; echo "$out" | tail -n 20 >&2
elif ! /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); c=s["param_checksums"]
sys.exit(0 if s["status"] == "completed" and len(c) == 2 and c[0] == c[1] else 1)' "$tmp/bn/summary.json"; then
  fail "resnet18 over 2 ranks: ranks differ or the run did not complete: $(cat "$tmp/bn/summary.json")"
elif ! result=$(/usr/bin/python3 "$(dirname "$0")/check_step_profile.py" "$tmp/bn" --steps 2); then
  fail "resnet18 over 2 ranks: $result"
elif [[ $backend == gloo ]] &&
     ! result=$(/usr/bin/python3 "$(dirname "$0")/check_message_log.py" "$tmp/bn-messages" 2 \
                  --traffic "$tmp/bn/traffic.csv" --category gradients --category buffers --category initial); then
  fail "resnet18 over 2 ranks: message log: $result"
else
  echo "ok: resnet18 with BatchNorm over 2 ranks in $(( $(date +%s) - start ))s, identical ranks, step_profile.json"
fi

echo "distributed_equivalence_test ($backend): $failures failure(s), total $(( $(date +%s) - start_all ))s"
exit $((failures > 0))
