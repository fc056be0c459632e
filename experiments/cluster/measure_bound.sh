#!/usr/bin/env bash
# measure_bound.sh: every backend x topology held against the link bound on the emulated cluster
# (docs/cluster.md, "The bound"; the table of docs/benchmarks-history.md, "The link bound").
#
#   eval "$(experiments/cluster/cluster.sh env)"      # a cluster that is up, with at least max(NODES) nodes
#   experiments/cluster/measure_bound.sh DTBENCH OUT [--rates "1gbit 200mbit"] [--nodes "2 3 4"]
#       [--per-node "1 2"] [--backends "gloo mpi"] [--sizes "64K 64M 4"] [--iters N] [--warmup N]
#
# For each rate (set with `cluster.sh rate`, on every link), node count, ranks per node and backend:
# one `srun -N nodes --ntasks-per-node=K dtbench allreduce --topology all` over the sizes (min, max,
# factor), its CSV in OUT/<rate>-<backend>-n<nodes>x<K>.csv (with bound_busbw_gbps and of_bound), then
# OUT/bound.md: per rate, backend, topology and placement, busbw / bound at every size. Runs one after
# another (the links are the thing measured). Root (cluster.sh rate).
# shellcheck source=measure_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure_common.sh"
rates="1gbit 200mbit" nodes_list="2 3 4" per_node_list="1 2" backends="gloo mpi" sizes="64K 64M 4" iters=5 warmup=2
measure_start "[--rates R...] [--nodes N...] [--per-node K...] [--backends B...] [--sizes 'MIN MAX FACTOR'] [--iters N] [--warmup N]" \
  "--rates=rates --nodes=nodes_list --per-node=per_node_list --backends=backends --sizes=sizes --iters=iters --warmup=warmup" "$@"
measure_need_cluster
read -r min max factor <<<"$sizes"
mkdir -p "$out"
port=$((21000 + $$ % 4000))
for rate in $rates; do
  set_rate "$rate"
  for nodes in $nodes_list; do
    for per_node in $per_node_list; do
      for backend in $backends; do
        csv=$out/$rate-$backend-n${nodes}x$per_node.csv
        [[ -s $csv ]] && continue  # measured already: the same command finishes what is left
        mpi=()
        [[ $backend == mpi ]] && mpi=(--mpi=pmix)
        port=$((port + 1))
        log "$rate $backend ${nodes} node(s) x $per_node"
        MASTER_ADDR=node1 MASTER_PORT=$port srun -w "node[1-$nodes]" -N "$nodes" --ntasks-per-node="$per_node" --cpus-per-task=1 "${mpi[@]}" \
          "$dtbench" allreduce --backend "$backend" --topology all -b "$min" -e "$max" -f "$factor" \
          --warmup-iters "$warmup" --iters "$iters" --timeout 600 --csv "$csv.part" >"$out/$rate-$backend-n${nodes}x$per_node.log" 2>&1 ||
          { echo "  failed: see $out/$rate-$backend-n${nodes}x$per_node.log" >&2; continue; }
        mv "$csv.part" "$csv"
      done
    done
  done
done

/usr/bin/python3 - "$out" <<'PY'
import csv, glob, os, re, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(f"{out}/*.csv")):
    m = re.match(r"(.+)-(gloo|mpi)-n(\d+)x(\d+)\.csv$", os.path.basename(path))
    if not m:
        continue
    for r in csv.DictReader(open(path)):
        rows.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), r))
sizes = sorted({int(r["size"]) for *_, r in rows})
def label(b):
    for unit, n in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n}{unit}"
    return str(b)
order = ["native", "ring", "tree", "binary-tree-star", "star", "clique", "hierarchical"]
with open(f"{out}/bound.md", "w") as f:
    for rate in sorted({x[0] for x in rows}, key=lambda s: -float(re.match(r"[\d.]+", s).group())):
        f.write(f"\n### {rate}: busbw / link bound (bound in GB/s at the largest size)\n\n")
        f.write("| backend | nodes x ranks | topology | " + " | ".join(label(s) for s in sizes) + " | bound GB/s |\n")
        f.write("|---|---|---|" + "---|" * (len(sizes) + 1) + "\n")
        keys = sorted({(b, n, k, r["topology"]) for (rt, b, n, k, r) in rows if rt == rate},
                      key=lambda x: (x[0], x[1], x[2], order.index(x[3]) if x[3] in order else 99))
        for b, n, k, t in keys:
            cells, bound = [], ""
            for s in sizes:
                got = [r for (rt, bb, nn, kk, r) in rows if (rt, bb, nn, kk, r["topology"], int(r["size"])) == (rate, b, n, k, t, s)]
                cells.append(f"{float(got[0]['of_bound']):.2f}" if got and got[0]["of_bound"] else "-")
                if got and got[0]["bound_busbw_gbps"]:
                    bound = f"{float(got[0]['bound_busbw_gbps']):.4f}"
            marker = " (ranks > cores)" if n * k > (os.cpu_count() or 1) else ""
            f.write(f"| {b} | {n} x {k}{marker} | {t} | " + " | ".join(cells) + f" | {bound} |\n")
print(open(f"{out}/bound.md").read())
PY
