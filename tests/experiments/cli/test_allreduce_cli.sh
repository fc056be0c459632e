#!/usr/bin/env bash
# dtbench allreduce on one rank: exit codes and messages for bad choices, a checked run of every
# topology with CSV, JSON and traffic output, and DTBENCH_CLUSTER's cases on one host (the bound
# across two hosts: test_allreduce_cluster.sh). Usage: allreduce_cli_test.sh path/to/dtbench
set -uo pipefail
dtbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../../expect_cli.sh"
launcher=(env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u DTBENCH_CLUSTER timeout 60)

version=$("$dtbench" --version) || { echo "FAIL: $dtbench --version failed" >&2; exit 1; }
if grep -q "(CUDA none" <<<"$version"; then
  expect 2 "this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch" allreduce --backend nccl
else
  expect 2 "--backend nccl cannot run --topology ring.*--backend gloo or mpi" allreduce --backend nccl --topology native,ring
  if grep -q "^gpus visible: 0$" <<<"$version"; then
    expect 1 "--backend nccl needs a GPU, and no GPU is visible.*use --backend gloo or mpi, which communicate from the CPU" \
      allreduce --backend nccl --topology native
  fi
fi
expect 2 "unknown backend 'grpc'.*gloo, mpi, nccl" allreduce --backend grpc
expect 2 "unknown topology 'mesh'.*binary-tree-star" allreduce --topology mesh
expect 2 "unsupported element type 'float64'.*float32, float16, bfloat16" allreduce --dtype float64
# Settings that cannot work are refused before anything runs: a sweep from 0 bytes (it would never
# end), thread counts that would hang starting threads, empty lists, non-numbers, unknown names on
# any rank, and outputs that cannot be written (not after the whole benchmark).
expect 2 "--min-bytes must be at least 1" allreduce -b 0 -e 8K
expect 2 "--threads must be in \[1, $(nproc)\].*got 100000" allreduce --threads 100000
expect 2 "--gloo-threads must be in \[1, 64\], got 100000" allreduce --gloo-threads 100000
expect 2 "--counts needs a comma-separated list.*got ',,'" allreduce --counts ,,
expect 2 "-f \(--factor\) takes a finite number.*got 'nan'" allreduce -f nan
touch "$tmp/a-file"
expect 2 "--message-log $tmp/a-file/logs cannot be created" allreduce --message-log "$tmp/a-file/logs" -b 4 -e 4
for rank in 0 1; do
  launcher=(env -u DTBENCH_CLUSTER RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 timeout 60)
  expect 2 "unknown backend 'foo'" allreduce --backend foo
  expect 2 "unknown topology 'foo'" allreduce --topology ring,foo
done
launcher=(env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u DTBENCH_CLUSTER timeout 60)
output=$("${launcher[@]}" "$dtbench" allreduce --counts 1 --iters 1 --warmup-iters 0 --csv "$tmp/missing/rows.csv" 2>&1)
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q -- "--csv $tmp/missing/rows.csv cannot be written" <<<"$output" ||
   grep -q "^# dtbench allreduce" <<<"$output"; then
  echo "FAIL: an unwritable --csv -> exit $rc (want 2, refused before the benchmark starts): $output" >&2
  failures=$((failures + 1))
fi
output=$(RANK=1 WORLD_SIZE=2 DTBENCH_CLUSTER= timeout 60 "$dtbench" allreduce --rank 0 --world-size 2 2>&1)
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q "rank sources disagree" <<<"$output"; then
  echo "FAIL: disagreeing flags and RANK -> exit $rc: $output" >&2
  failures=$((failures + 1))
fi
expect 0 "algbw x 2\(N-1\)/N" allreduce --help
expect 0 "# check: 0 wrong" allreduce --topology all --dtype float32,float16,bfloat16 --counts 0,1,13,4099 --iters 1 \
  --warmup-iters 0 --check --csv "$tmp/rows.csv" --json "$tmp/rows.json" --traffic "$tmp/traffic.csv" \
  --timeline "$tmp/timeline.csv"
expect 0 "launch +start N local ranks" --help

rows=$(($(wc -l <"$tmp/rows.csv") - 1))
# 7 topologies x 4 counts for each of float32, float16 and bfloat16.
[[ $rows -eq 84 ]] || { echo "FAIL: $rows CSV rows, want 84" >&2; failures=$((failures + 1)); }
header='backend,topology,world_size,size,count,type,time_us,algbw_gbps,busbw_gbps,wrong,link_rate_bps,bound_busbw_gbps,of_bound,nodes,segment_bytes,timing,iter_min_us,iter_max_us,iter_p99_us,iter_cv_pct,noisy'
[[ $(head -n 1 "$tmp/rows.csv") == "$header" ]] || { echo "FAIL: CSV header" >&2; failures=$((failures + 1)); }
# Off the cluster the link rate and bound cells are empty, the JSON's keys null; then one node and
# the segment: each topology's default (ring and clique whole chunks, 0), empty / null for native.
# One iteration (--iters 1): its min, max and p99 are its time, no CV, not noisy.
[[ $(tail -n +2 "$tmp/rows.csv" | grep -Evc ',,,1,[0-9]*,each,([0-9.e+-]+),\1,\1,,no$') -eq 0 ]] ||
  { echo "FAIL: off the cluster, a CSV row has a link rate or bound, or not 1 node" >&2; failures=$((failures + 1)); }
/usr/bin/python3 -c "
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 84 and all(r['wrong'] == 0 for r in rows)
assert all(r['link_rate_bps'] is None and r['bound_busbw_gbps'] is None and r['of_bound'] is None for r in rows)
assert all(r['nodes'] == 1 for r in rows)
assert all(r['iter_min_us'] == r['iter_max_us'] == r['iter_p99_us'] >= 0 and r['iter_cv_pct'] is None
           and r['noisy'] == 'no' for r in rows), rows
default = {'native': None, 'ring': 0, 'clique': 0}
assert all(r['segment_bytes'] == default.get(r['topology'], 1 << 20) for r in rows), rows" \
  "$tmp/rows.json" || { echo "FAIL: JSON rows" >&2; failures=$((failures + 1)); }
# --segment-bytes is the segment of every point-to-point row.
expect 0 "segments of 4096 bytes" allreduce --topology native,tree --counts 5000 --iters 1 --warmup-iters 0 \
  --segment-bytes 4096 --csv "$tmp/segments.csv"
[[ $(cut -d, -f2,14,15 "$tmp/segments.csv" | tr '\n' ' ') == "topology,nodes,segment_bytes native,1, tree,1,4096 " ]] ||
  { echo "FAIL: --segment-bytes 4096: $(cat "$tmp/segments.csv")" >&2; failures=$((failures + 1)); }
# --timing loop: nccl-tests' timing, named in the CSV; --timing loop --check still checks every element.
expect 0 "check: 0 wrong" allreduce --topology native,ring --counts 1000 --iters 3 --warmup-iters 1 --timing loop \
  --check --csv "$tmp/loop.csv"
# loop times no single iteration: its per-iteration cells are empty.
[[ $(tail -n +2 "$tmp/loop.csv" | cut -d, -f2,16- | tr '\n' ' ') == "native,loop,,,,, ring,loop,,,,, " ]] ||
  { echo "FAIL: --timing loop: $(cat "$tmp/loop.csv")" >&2; failures=$((failures + 1)); }
# each over 5 iterations: min <= p99 <= max, a CV, and the noisy cell says no or why.
expect 0 "# topology ring" allreduce --topology ring --counts 1000 --iters 5 --warmup-iters 1 --csv "$tmp/each.csv"
/usr/bin/python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
lo, hi, p99, cv = (float(r[k]) for k in ('iter_min_us', 'iter_max_us', 'iter_p99_us', 'iter_cv_pct'))
assert 0 < lo <= p99 <= hi and cv >= 0, r
assert r['noisy'] == 'no' or r['noisy'].startswith(('CV ', 'max ')), r
assert (cv > 5) == r['noisy'].startswith('CV '), r" \
  "$tmp/each.csv" || { echo "FAIL: per-iteration columns: $(cat "$tmp/each.csv")" >&2; failures=$((failures + 1)); }
expect 2 "--timing must be each or loop, got 'nccl'" allreduce --timing nccl
# A buffer beyond the machine's memory is refused by name, before anything is allocated.
expect 2 "--counts: the largest all-reduce takes 400 GiB per rank, more than this machine's" allreduce --counts 1,100G
# --ranks-per-host takes what its rule says (0: real host names); the launcher's variable is named as itself.
expect 0 "check: 0 wrong" allreduce --topology ring --counts 100 --iters 1 --warmup-iters 0 --check --ranks-per-host 0
expect 2 "--ranks-per-host must be >= 0" allreduce --ranks-per-host -1
DTBENCH_RANKS_PER_HOST=-3 expect 2 "DTBENCH_RANKS_PER_HOST must be a whole number >= 0.*got '-3'" allreduce --counts 100
DTBENCH_RANKS_PER_HOST=2x expect 2 "DTBENCH_RANKS_PER_HOST must be a whole number >= 0.*got '2x'" allreduce --counts 100
[[ $(head -n 1 "$tmp/traffic.csv") == "src,dst,bytes,kind" ]] || { echo "FAIL: traffic header" >&2; failures=$((failures + 1)); }
[[ $(head -n 1 "$tmp/timeline.csv") == "t_start_s,src,dst,bytes" ]] || { echo "FAIL: timeline header" >&2; failures=$((failures + 1)); }

# DTBENCH_CLUSTER on one host. This host a node at 1 Gbit/s: the CSV's link_rate_bps is its rate,
# but no byte crosses a link, so no bound. This host no node: off the cluster, one warning line.
# A malformed or missing file: a usage error naming the variable (and the field).
cat >"$tmp/cluster.json" <<EOF
{"name": "t", "nodes": [{"name": "$(hostname)", "link_rate_bps": 1000000000},
                        {"name": "other-node", "link_rate_bps": null}]}
EOF
one=(allreduce --topology ring --counts 1200 --iters 1 --warmup-iters 0)
on_cluster() { launcher=(env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT DTBENCH_CLUSTER="$1" timeout 60); }
on_cluster "$tmp/cluster.json"
expect 0 "# cluster $tmp/cluster.json: links $(hostname) 1 Gbit/s; every rank on one host" "${one[@]}" --csv "$tmp/one.csv"
[[ $(tail -n 1 "$tmp/one.csv") == *,1000000000,,,1,0,each,*,no ]] ||
  { echo "FAIL: one host on the cluster: $(tail -n 1 "$tmp/one.csv")" >&2; failures=$((failures + 1)); }
echo '{"nodes": [{"name": "other-node", "link_rate_bps": 1e9}]}' >"$tmp/elsewhere.json"
on_cluster "$tmp/elsewhere.json"
expect 0 "^dtbench: warning: host '$(hostname)' is not a node of DTBENCH_CLUSTER=$tmp/elsewhere.json; running off" \
  "${one[@]}" --csv "$tmp/off.csv"
[[ $(tail -n 1 "$tmp/off.csv") == *,,,,1,0,each,*,no ]] ||
  { echo "FAIL: a host that is no node: $(tail -n 1 "$tmp/off.csv")" >&2; failures=$((failures + 1)); }
echo '{"nodes": [{"name": "x", "link_rate_bps": "fast"}]}' >"$tmp/bad.json"
on_cluster "$tmp/bad.json"
expect 2 "DTBENCH_CLUSTER=$tmp/bad.json: cluster file $tmp/bad.json: nodes\\[0\\]\\.link_rate_bps must be a positive" \
  "${one[@]}"
on_cluster "$tmp/absent.json"
expect 2 "DTBENCH_CLUSTER=$tmp/absent.json: cannot read cluster file" "${one[@]}"
[[ $failures -eq 0 ]] && echo "ok: allreduce CLI" || exit 1
