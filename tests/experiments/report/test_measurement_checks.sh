#!/usr/bin/env bash
# Table 1's `check` column and its notes: runs that held one machine at the same time (the same boot id
# in config.json's devices, overlapping from summary.json's started_at to their last write), ranks whose
# threads outnumbered the machine's cores, and an efficiency above 1. The fixture's lenet runs at batch
# 32 on 1 and 2 ranks, given devices and times:
#   together      both on machine "m1", at the same time: both rows `overlap`, the note names both runs;
#   apart         both on "m1", one after the other: no flag;
#   two machines  at the same time on "m1" and "m2": no flag;
#   crowded       the 2-rank run's ranks with 2 threads each on 2 cores: `oversubscribed`, named;
#   superlinear   the 2-rank run 3x faster: `efficiency > 1`, named;
#   single_threads the 2-rank run's ranks with 1 thread each on 1 core: `oversubscribed`, and the note
#                 says to run fewer ranks (fewer threads cannot help);
#   old_eval      the runs as recorded by dtbench 0.1.0 with evaluation on (the fixture's own): the 2-rank
#                 row `eval in T` (its T holds rank 0's evaluation), named.
# The other cases' runs say dtbench 0.2.0 recorded them (config.json's environment).
# Usage: test_measurement_checks.sh DTBENCH FIXTURE_DIR
set -euo pipefail
dtbench=$1 fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

make_case() {  # make_case NAME START1 BOOT1 START2 BOOT2 THREADS2 SPEED2
  local name=$1
  local -a one=("$2" "$3" 1 1) two=("$4" "$5" "$6" "$7")
  mkdir -p "$tmp/$name"
  for n in 1 2; do
    local dir=$tmp/$name/lenet-n$n
    cp -r "$fixture/runs/lenet-b32-n$n" "$dir"
    local -a facts=("${one[@]}")
    [[ $n == 2 ]] && facts=("${two[@]}")
    /usr/bin/python3 - "$dir" "${facts[@]}" <<'PY'
import json, sys
import os
d, start, boot, threads = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
config = json.load(open(f"{d}/config.json"))
world = config.get("world_size", 1)
cores = int(os.environ.get("CORES", "2"))
config["devices"] = [{"type": "cpu", "model": "test CPU", "host": "h", "boot_id": boot, "cores": cores, "threads": threads}
                     for _ in range(world)]
config["environment"]["dtbench_version"] = os.environ.get("VERSION", "0.2.0")
json.dump(config, open(f"{d}/config.json", "w"))
summary = json.load(open(f"{d}/summary.json"))
summary["started_at"], summary["finished_at"], summary["updated_at"] = start, start + 100, start + 100
json.dump(summary, open(f"{d}/summary.json", "w"))
PY
    /usr/bin/python3 "$(dirname "$0")/scale_batch_times.py" "$dir" "$(/usr/bin/python3 -c "print(1 / ${facts[3]})")"
  done
  "$dtbench" report "$tmp/$name" --table time_speedup --format csv > "$tmp/$name.csv"
  "$dtbench" report "$tmp/$name" --table time_speedup > "$tmp/$name.md"
}
checks() {  # checks NAME: "N=1:<check>;N=2:<check>"
  /usr/bin/python3 -c '
import csv, sys
print(";".join("N=" + r["N"] + ":" + r["check"] for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/$1.csv"
}
expect() {  # expect NAME WANT
  local got
  got=$(checks "$1")
  [[ $got == "$2" ]] || fail "$1: check column '$got', want '$2'"
}

make_case together 1000 m1 1050 m1 1 1
make_case apart 1000 m1 2000 m1 1 1
make_case two_machines 1000 m1 1000 m2 1 1
make_case crowded 1000 m1 2000 m1 2 1
make_case superlinear 1000 m1 2000 m1 1 3
CORES=1 make_case single_threads 1000 m1 2000 m1 1 1
VERSION=0.1.0 make_case old_eval 1000 m1 2000 m1 1 1

expect together "N=1:overlap;N=2:overlap"
expect apart "N=1:;N=2:"
expect two_machines "N=1:;N=2:"
expect crowded "N=1:;N=2:oversubscribed"
expect superlinear "N=1:;N=2:efficiency > 1"
expect single_threads "N=1:;N=2:oversubscribed"
expect old_eval "N=1:;N=2:eval in T"
grep -qF -- "run fewer ranks on the machine" "$tmp/single_threads.md" ||
  fail "the oversubscription note of one-thread ranks: $(grep -F oversubscribed "$tmp/single_threads.md")"
grep -qF -- "Give each rank fewer threads" "$tmp/single_threads.md" &&
  fail "the note tells ranks at one thread to use fewer threads"
grep -qF -- "- \`eval in T\`: run lenet-n2 was recorded before dtbench 0.2.0 with evaluation on" "$tmp/old_eval.md" ||
  fail "the eval-in-T note: $(grep -F 'eval in T' "$tmp/old_eval.md")"
grep -qF -- "- \`overlap\`: runs lenet-n1 and lenet-n2 held one machine" "$tmp/together.md" ||
  fail "the overlap note does not name both runs: $(grep -F overlap "$tmp/together.md")"
grep -qF -- "- \`oversubscribed\`: run lenet-n2 had 2 ranks with 4 threads on 2 cores" "$tmp/crowded.md" ||
  fail "the oversubscription note: $(grep -F oversubscribed "$tmp/crowded.md")"
grep -qF -- "- \`efficiency > 1\`: lenet B=32 N=2: efficiency 2.11" "$tmp/superlinear.md" ||
  fail "the efficiency note: $(grep -F 'efficiency >' "$tmp/superlinear.md")"
exit $status
