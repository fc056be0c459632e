#!/bin/bash
# `dtbench sweep --launcher slurm` placing ranks on nodes of the emulated cluster: --grid nodes=1,2 with
# --ranks-per-node 2 and --grid backend=gloo,mpi submits 4 jobs through slurm/train_multinode.sbatch
# (sbatch --nodes=M --ntasks-per-node=2); every point completes on M nodes (config.json's hosts are the
# node names, two ranks each), and the report's Table 1 says how many nodes each run used. The cluster
# keeps accounting (up --accounting): the sweep writes DIR/sacct.txt, and its job table joins every run
# with its Slurm job (job id as config.json records it, queue wait, no requeue, COMPLETED), and the
# cost table has the time to result.
#   tests/experiments/cluster/test_sweep.sh path/to/dtbench
set -uo pipefail
DTBENCH=$(realpath "${1:?usage: $0 DTBENCH}")
source "$(dirname "$0")/common.sh"
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
cluster_up --nodes 2 --rate 1gbit --cpus 2 --gpus 2 --accounting
cd "$work" || fail "cd $work"

"$DTBENCH" sweep --launcher slurm --out "$work/sweep" --sbatch-args "--time=5 --cpus-per-task=1" \
  --grid nodes=1,2 --ranks-per-node 2 --grid backend=gloo,mpi --slurm-timeout 240 -- \
  --model lenet --dataset synthetic --synthetic-train-size 256 --synthetic-test-size 32 --batch-size 8 \
  --epochs 1 --max-steps 4 --no-eval --threads 1 --workers 0 --timeout 60 --device cpu --quiet \
  >"$work/sweep.out" 2>&1 || { tail -n 30 "$work/sweep.out" >&2; fail "the sweep failed"; }

"$DTBENCH" report "$work/sweep" --table time_speedup --format csv >"$work/table1.csv" 2>"$work/report.err" ||
  { cat "$work/report.err" >&2; fail "dtbench report failed"; }
/usr/bin/python3 - "$work/sweep" "$work/table1.csv" <<'PY' || fail "the sweep's points, Table 1 or its accounting are wrong"
import csv, json, os, sys
sweep, table = sys.argv[1], sys.argv[2]
problems = []
for nodes in (1, 2):
    for backend in ("gloo", "mpi"):
        name = f"nodes{nodes}-backend_{backend}"
        config = json.load(open(f"{sweep}/{name}/config.json"))
        summary = json.load(open(f"{sweep}/{name}/summary.json"))
        hosts = config.get("hosts") or []
        # a 1-node point runs on whichever node Slurm picks; a 2-node one on both, two ranks each
        want = [hosts[0]] * 2 if nodes == 1 and hosts[:1] in (["node1"], ["node2"]) else [f"node{r // 2 + 1}" for r in range(2 * nodes)]
        if summary.get("status") != "completed":
            problems.append(f"{name}: status {summary.get('status')}")
        if config.get("world_size") != 2 * nodes or config.get("hosts") != want or config.get("backend") != backend:
            problems.append(f"{name}: world {config.get('world_size')}, hosts {config.get('hosts')}, backend {config.get('backend')}; want {2 * nodes} ranks on {want}")
rows = list(csv.DictReader(open(table)))
seen = sorted((r["setup"].split("/")[0], int(r["N"]), int(r["nodes"])) for r in rows if r["N"] != "1")
want = sorted([("gloo", 2, 1), ("gloo", 4, 2), ("mpi", 2, 1), ("mpi", 4, 2)])
if seen != want:
    problems.append(f"Table 1 rows (backend, N, nodes) {seen}, want {want}")
if not os.path.exists(f"{sweep}/sacct.txt"):
    problems.append("no sacct.txt: the sweep did not read the accounting")
jobs = list(csv.DictReader(open(f"{sweep}/jobs.csv")))
for job in jobs:
    config = json.load(open(f"{job['path']}/config.json"))
    where = f"jobs.csv {job['id']}"
    if not job.get("slurm_job_id") or job["slurm_job_id"] != config.get("slurm_job_id"):
        problems.append(f"{where}: slurm_job_id {job.get('slurm_job_id')!r}, config.json {config.get('slurm_job_id')!r}")
    if job.get("slurm_state") != "COMPLETED" or job.get("requeues") != "0":
        problems.append(f"{where}: slurm_state {job.get('slurm_state')!r}, requeues {job.get('requeues')!r}; want COMPLETED, 0")
    try:
        if float(job.get("queue_wait_s", "")) < 0:
            problems.append(f"{where}: negative queue wait {job['queue_wait_s']}")
    except ValueError:
        problems.append(f"{where}: queue_wait_s {job.get('queue_wait_s')!r} is not a number")
report = open(f"{sweep}/report.md").read()
if "time_to_result_s" not in report:
    problems.append("report.md's cost table has no time_to_result_s")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"Table 1: {seen}; {len(jobs)} jobs joined with the accounting")
PY
expect_nothing_left
echo "PASS: sweep --grid nodes=1,2 --ranks-per-node 2 over gloo and mpi on the emulated cluster"
