#!/bin/bash
# The multi-node path on the emulated cluster: slurm/train_multinode.sbatch runs dtbench across 3 nodes
# (one rank each) over gloo, over mpi under `srun --mpi=pmix` and over mpi started by `mpirun` inside
# the allocation, and across 2 nodes x 2 ranks with hierarchical and binary-tree-star, whose hosts are
# the nodes' real hostnames (no --ranks-per-host). Each run's final param_checksum equals a 1-rank run
# of the same global batch (relative 1e-5, as tests/trainer/test_distributed_equivalence.sh), config.json
# names the nodes as hosts, records their link rate and the Slurm job id, and in the host-aware topologies only the host
# leaders send bytes across nodes.
#   tests/experiments/cluster/test_training.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
cluster_up --nodes 3 --rate 1gbit --cpus 2 --gpus 2

export DTBENCH RUNS=$work/runs
mkdir -p "$RUNS"
cd "$work" || fail "cd $work"
train=(--model lenet --dataset synthetic --synthetic-train-size 480 --synthetic-test-size 32 --seed 7 --lr 0.05
       --epochs 1 --max-steps 6 --no-eval --threads 1 --workers 0 --timeout 60 --device cpu --quiet)

# submit NAME NODES RANKS_PER_NODE [VAR=VALUE...] -- TRAIN ARGS: a job of train_multinode.sbatch; prints its id.
submit() {
  local name=$1 nodes=$2 per_node=$3; shift 3
  local vars=()
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  env "${vars[@]}" RUN_NAME="$name" sbatch --parsable --job-name="$name" --nodes="$nodes" --ntasks-per-node="$per_node" \
    --gres=gpu:"$per_node" --cpus-per-task=1 --time=5 --output="$work/$name.out" \
    "$repo/slurm/train_multinode.sbatch" "${train[@]}" "$@" || fail "sbatch of $name failed"
}
declare -A jobs
jobs[gloo-native]=$(submit gloo-native 3 1 -- --batch-size 4 --backend gloo)
jobs[mpi-pmix-ring]=$(submit mpi-pmix-ring 3 1 -- --batch-size 4 --backend mpi --topology ring)
jobs[mpi-mpirun-native]=$(submit mpi-mpirun-native 3 1 DTBENCH_MPI_LAUNCH=mpirun -- --batch-size 4 --backend mpi)
jobs[gloo-hierarchical]=$(submit gloo-hierarchical 2 2 -- --batch-size 4 --backend gloo --topology hierarchical)
jobs[mpi-bts]=$(submit mpi-bts 2 2 -- --batch-size 4 --backend mpi --topology binary-tree-star)
info "submitted ${!jobs[*]}: ${jobs[*]}"

info "the 1-rank references (global batch 12 and 16), outside the cluster"
for b in 12 16; do
  env -u DTBENCH_CLUSTER -u SLURM_CONF "$DTBENCH" train "${train[@]}" --batch-size "$b" --out "$work/reference$b" \
    >"$work/reference$b.out" 2>&1 || fail "the 1-rank reference with batch $b failed"
done

failures=0
for name in "${!jobs[@]}"; do
  state=$(wait_job "${jobs[$name]}" 180)
  if [[ $state != COMPLETED ]]; then
    echo "---- $name (job ${jobs[$name]}) ended $state ----" >&2; tail -n 30 "$work/$name.out" >&2
    failures=$((failures + 1)); continue
  fi
  case $name in gloo-hierarchical|mpi-bts) reference=$work/reference16 world=4 ;; *) reference=$work/reference12 world=3 ;; esac
  /usr/bin/python3 - "$RUNS/$name" "$reference" "$world" "$name" "${jobs[$name]}" <<'PY' || failures=$((failures + 1))
import csv, json, sys
run_dir, ref_dir, world, name, job = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
run = json.load(open(f"{run_dir}/summary.json"))
ref = json.load(open(f"{ref_dir}/summary.json"))
config = json.load(open(f"{run_dir}/config.json"))
problems = []
per_node = 2 if world == 4 else 1
want_hosts = [f"node{r // per_node + 1}" for r in range(world)]
if config.get("hosts") != want_hosts or config.get("hosts_emulated") is not False:
    problems.append(f"hosts {config.get('hosts')} (emulated {config.get('hosts_emulated')}), want {want_hosts} from the real hostnames")
if config.get("slurm_job_id") != job:
    problems.append(f"slurm_job_id {config.get('slurm_job_id')!r}, want the job's id {job!r}")
rates = config.get("link_rate_bps")
if rates != {h: 1_000_000_000 for h in sorted(set(want_hosts))}:
    problems.append(f"link_rate_bps {rates!r}, want 1e9 for each of {sorted(set(want_hosts))}")
a, b = ref["param_checksum"], run["param_checksum"]
rel = abs(a - b) / max(abs(a), 1e-12)
if run.get("status") != "completed" or rel > 1e-5:
    problems.append(f"status {run.get('status')}, param_checksum {b!r} vs the 1-rank {a!r} (relative {rel:.3g})")
if len(set(run.get("param_checksums", []))) != 1:
    problems.append(f"ranks hold different parameters: {run.get('param_checksums')}")
if config["topology"] in ("hierarchical", "binary-tree-star"):
    leaders = {0, 2}
    crossing = set()
    for row in csv.DictReader(open(f"{run_dir}/traffic.csv")):
        src, dst, n = int(row["src"]), int(row["dst"]), int(row["bytes"])
        if n > 0 and want_hosts[src] != want_hosts[dst]:
            crossing.add((src, dst))
    if not crossing or not all(s in leaders and d in leaders for s, d in crossing):
        problems.append(f"pairs sending across nodes {sorted(crossing)}: want only the leaders 0 and 2")
if problems:
    print(f"FAIL {name}: " + "; ".join(problems))
    sys.exit(1)
print(f"ok {name}: {world} ranks on {sorted(set(want_hosts))}, param_checksum {b} (1-rank {a}, relative {rel:.2g})")
PY
done
((failures == 0)) || fail "$failures run(s) wrong"
expect_nothing_left
echo "PASS: multi-node training on the emulated cluster (gloo, mpi via srun and mpirun, hierarchical and binary-tree-star over real hosts)"
