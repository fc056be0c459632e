#!/bin/bash
# Slurm accounting on the emulated cluster (`cluster.sh up --accounting`: a MariaDB and a slurmdbd of
# its own). Plain shell jobs on 2 nodes: one completes with a GPU, one fails with exit 3, one is
# cancelled while it runs, one is requeued while it runs and then completes, one spans both nodes with
# 2 GPUs each. slurm/sacct_jobs.sh must then list each with its state, exit code, times and GPUs, the
# requeued job twice under one JobID (REQUEUED, then COMPLETED). `dtbench report --sacct` ingests
# that file: 5 jobs of 6 attempts, each job with its GPUs, the right final state and GPU time. Status
# and cluster.json name the accounting daemons, and `down` leaves none of them running.
#   tests/experiments/cluster/test_accounting.sh path/to/dtbench
set -uo pipefail
source "$(dirname "$0")/common.sh"
DTBENCH=$(realpath "${1:-$repo/build/dtbench}")
[[ -x $DTBENCH ]] || fail "$DTBENCH is not executable"
for c in slurmdbd mariadbd sacct sacctmgr; do
  command -v "$c" >/dev/null || fail "$c not installed: run scripts/install_deps.sh (slurmdbd, mariadb-server)"
done
cluster_up --nodes 2 --accounting
dir=/run/dtbench-cluster/$CLUSTER_NAME

cluster status >"$work/status.txt" 2>&1 || fail "status failed: $(cat "$work/status.txt")"
grep -Eq '^accounting: slurmdbd .*\(up\), MariaDB .*\(up\)$' "$work/status.txt" ||
  fail "status does not show slurmdbd and MariaDB up: $(cat "$work/status.txt")"
/usr/bin/python3 - "$DTBENCH_CLUSTER" <<'PY' || fail "cluster.json has no accounting entry"
import json, sys
acct = json.load(open(sys.argv[1]))["accounting"]
assert isinstance(acct["slurmdbd_port"], int) and acct["mariadb_socket"].endswith("mariadb.sock"), acct
PY

cd "$work" || fail "cd $work"
submit() { sbatch --parsable --output="$work/%x.out" "$@" || fail "sbatch $* failed"; }
ok=$(submit --job-name=ok --gres=gpu:1 --wrap 'sleep 1')
failed=$(submit --job-name=failed --gres=gpu:1 --wrap 'exit 3')
cancelled=$(submit --job-name=cancelled --gres=gpu:1 --wrap 'sleep 300')
requeued=$(submit --job-name=requeued --gres=gpu:2 --requeue --wrap 'sleep 4')
multi=$(submit --job-name=multi --nodes=2 --ntasks-per-node=1 --gres=gpu:2 --wrap 'sleep 1')
info "jobs: ok $ok, failed $failed, cancelled $cancelled, requeued $requeued, multi $multi"

running() { [[ $(job_state "$1") == RUNNING ]]; }
wait_for 30 "job $cancelled to run" running "$cancelled"
scancel "$cancelled" || fail "scancel $cancelled failed"
wait_for 30 "job $requeued to run" running "$requeued"
scontrol requeue "$requeued" || fail "scontrol requeue $requeued failed"
# Slurm holds a requeued job 120 s (Reason=BeginTime); its start moves to now once the first attempt
# has ended, a few seconds later (slurmd refuses a credential of the same job issued within the second
# of its revocation; docs/cluster.md, "A node that dies").
held() { [[ $(job_state "$requeued") == PENDING && $(job_field "$requeued" Reason) == BeginTime ]]; }
wait_for 30 "job $requeued to be held after its requeue" held
sleep 3
scontrol update JobId="$requeued" StartTime=now || fail "scontrol update JobId=$requeued StartTime=now failed"
for job in "$ok" "$failed" "$cancelled" "$requeued" "$multi"; do
  state=$(wait_job "$job" 60)
  info "job $job ended $state"
done

# slurmdbd receives the records from slurmctld's queue, possibly a little later than the jobs end.
records() {
  "$repo/slurm/sacct_jobs.sh" "$work/jobs.psv" 2>"$work/sacct.err" || return 1
  /usr/bin/python3 - "$work/jobs.psv" "$ok" "$failed" "$cancelled" "$requeued" "$multi" <<'PY'
import sys
rows = [l.split("|") for l in open(sys.argv[1]).read().splitlines()[1:]]
done = [r for r in rows if r[0] in sys.argv[2:] and r[8] not in ("", "Unknown")]
sys.exit(0 if len(done) >= 6 else 1)
PY
}
wait_for 30 "sacct to show all 6 job records" records
cat "$work/jobs.psv" >&2

/usr/bin/python3 - "$work/jobs.psv" "$ok" "$failed" "$cancelled" "$requeued" "$multi" <<'PY' || fail "sacct's records are wrong (above)"
import sys
from datetime import datetime
path, ok, failed, cancelled, requeued, multi = sys.argv[1:]
lines = open(path).read().splitlines()
want = "JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocTRES"
assert lines[0] == want, f"header {lines[0]!r}"
rows = [dict(zip(want.split("|"), l.split("|"))) for l in lines[1:]]
assert all(len(l.split("|")) == 12 for l in lines[1:]), "a row without 12 fields"
by = {}
for r in rows:
    by.setdefault(r["JobID"], []).append(r)
def one(job):
    assert len(by.get(job, [])) == 1, f"job {job}: {len(by.get(job, []))} rows, want 1"
    return by[job][0]
def tres(r):
    return dict(kv.split("=", 1) for kv in r["AllocTRES"].split(",") if kv)
assert one(ok)["State"] == "COMPLETED" and one(ok)["ExitCode"] == "0:0", one(ok)
assert tres(one(ok)).get("gres/gpu") == "1", one(ok)
assert one(failed)["State"] == "FAILED" and one(failed)["ExitCode"] == "3:0", one(failed)
assert one(cancelled)["State"].startswith("CANCELLED"), one(cancelled)
attempts = sorted(by.get(requeued, []), key=lambda r: (r["Start"], r["End"]))
assert [r["State"] for r in attempts] == ["REQUEUED", "COMPLETED"], f"requeued job {requeued}: {attempts}"
m = one(multi)
assert m["State"] == "COMPLETED" and m["NNodes"] == "2" and tres(m).get("gres/gpu") == "4", m
for r in rows:
    if r["JobID"] not in sys.argv[2:]:
        continue
    t = {k: datetime.fromisoformat(r[k]) for k in ("Submit", "Start", "End")}
    assert t["Submit"] <= t["Start"] <= t["End"], f"times out of order: {r}"
    span = (t["End"] - t["Start"]).total_seconds()
    assert abs(int(r["ElapsedRaw"]) - span) <= 1, f"ElapsedRaw {r['ElapsedRaw']} vs End - Start {span}: {r}"
print(f"sacct: {len(rows)} rows, states " + ", ".join(f"{r['JobID']} {r['State']}" for r in rows))
PY

# The report ingests it: every job once, GPUs from AllocTRES, states normalised, GPU time = GPUs x run
# time summed over a requeued job's attempts (ElapsedRaw has whole seconds, the report reads Start and
# End, also whole seconds).
TZ=UTC "$DTBENCH" report --sacct "$work/jobs.psv" --table trace_jobs,final_states --format csv \
  >"$work/ingested.csv" 2>"$work/ingest.err" || fail "dtbench report --sacct failed: $(cat "$work/ingest.err")"
/usr/bin/python3 - "$work/ingested.csv" "$work/jobs.psv" <<'PY' || fail "the ingested job table is wrong (above)"
import csv, io, sys
from datetime import datetime
text = open(sys.argv[1]).read()
sections = [s for s in text.split("\n\n") if s.strip()]
tables = {}
for s in sections:
    lines = [l for l in s.splitlines() if not l.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    if rows:
        tables["trace_jobs" if "attempts" in rows[0] else "final_states"] = rows
jobs = tables["trace_jobs"][0]
assert (jobs["rows"], jobs["attempts"], jobs["jobs"], jobs["gpu_jobs"]) == ("6", "6", "5", "5"), jobs
# GPU hours from the sacct rows: GPUs x (End - Start) over every attempt
want = 0.0
for l in open(sys.argv[2]).read().splitlines()[1:]:
    f = l.split("|")
    gpus = int(dict(kv.split("=", 1) for kv in f[11].split(",") if kv).get("gres/gpu", 0))
    want += gpus * (datetime.fromisoformat(f[8]) - datetime.fromisoformat(f[7])).total_seconds() / 3600
assert abs(float(jobs["gpu_hours"]) - want) < 1e-4, f"gpu_hours {jobs['gpu_hours']}, want {want}"
states = {r["state"]: r for r in tables["final_states"] if r["gpus"] == "all"}
counts = {k: v["jobs"] for k, v in states.items()}
assert counts == {"COMPLETED": "3", "FAILED": "1", "CANCELLED": "1"}, counts
print(f"ingested: {jobs['jobs']} jobs, {jobs['gpu_hours']} GPU-hours, states {counts}")
PY

# down removes the accounting daemons with the rest.
dbd_pid=$(cat "$dir/pids/slurmdbd.pid") db_pid=$(cat "$dir/db/mariadb.pid")
cluster down >/dev/null 2>&1 || fail "down failed"
alive() { [[ -e /proc/$1 && $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }  # a zombie is gone
gone() { ! alive "$dbd_pid" && ! alive "$db_pid"; }
wait_for 10 "slurmdbd ($dbd_pid) and mariadbd ($db_pid) to end after down" gone
[[ ! -e $dir ]] || fail "down left $dir"
echo "PASS: accounting: sacct shows completed, failed (3:0), cancelled, requeued (2 rows) and 2-node jobs with their GPUs and times"
