"""Before and after: two dtbench builds measured alternately on one machine, for a change that must
not make dtbench slower (a refactoring, a new dependency, a compiler flag).

Two benchmarks of docs/benchmarks.md, each side by side with its reference in the same run:
  single-rank  images / sum(step_s - data_s) of `dtbench train` (the same runs as
               scripts/bench_single_rank.py: SGD, synthetic CIFAR-shaped data, 2 warm-up steps
               left out), and PyTorch eager in Python on the same LibTorch;
  all-reduce   busbw of `dtbench allreduce --topology all` over gloo (dtbench launch) and mpi
               (mpirun --bind-to none) at 2 ranks, float32, 4 KB .. 64 MB (x4), and raw
               MPI_Allreduce (scripts/mpi_allreduce_reference.c);
  distributed  rank 0's median step time of a two-rank S-SGD run (scripts/bench_distributed.sh: gloo and
               mpi, with and without overlap, one repeat per call), and PyTorch DistributedDataParallel.
Each repeat runs A, B and the reference in turn, the order reversed every other repeat. The tables
give the median (min-max) of each side, B/A of the medians, and whether each median lies within
the other side's min-max ("same": the difference is inside the run-to-run spread).

Usage: scripts/torch_python scripts/bench_ab.py --a BASE/dtbench --b NEW/dtbench [--repeats 5]
       [--skip-single-rank] [--skip-allreduce] [--skip-distributed] [--json FILE]
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_single_rank import run_dtbench, run_python  # noqa: E402  (the same runs, one definition)

SIZES = dict(min=4096, max=64 << 20, factor=4, warmup=5, iters=20)


def allreduce_rows(dtbench, backend, world):
    """{(topology, size): busbw} of one `dtbench allreduce --topology all` run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.csv")
        flags = ["allreduce", "--backend", backend, "--topology", "all", "--min-bytes", str(SIZES["min"]),
                 "--max-bytes", str(SIZES["max"]), "--factor", str(SIZES["factor"]), "--warmup-iters",
                 str(SIZES["warmup"]), "--iters", str(SIZES["iters"]), "--threads", "1", "--csv", out]
        if backend == "gloo":
            cmd = [dtbench, "launch", "-n", str(world), "--", dtbench] + flags
        else:
            cmd = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(world), dtbench] + flags
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return {(r["topology"], int(r["size"])): float(r["busbw_gbps"]) for r in csv.DictReader(f)}


def raw_mpi_rows(binary, world):
    cmd = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(world), binary, str(SIZES["min"]),
           str(SIZES["max"]), str(SIZES["factor"]), str(SIZES["warmup"]), str(SIZES["iters"])]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {("raw MPI_Allreduce", int(r["size"])): float(r["busbw_gbps"]) for r in csv.DictReader(io.StringIO(text))}


DISTRIBUTED_CONFIGS = "gloo mpi gloo-nolap mpi-nolap"


def distributed_rows(build_dir, configs, out):
    """{(model, config): (step_s, step_s - data_s)} of one scripts/bench_distributed.sh repeat."""
    env = dict(os.environ, CONFIGS=configs)
    subprocess.run([os.path.join(HERE, "bench_distributed.sh"), build_dir, "1", out], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as f:
        runs = json.load(f)["runs"]
    return {tuple(key.split("/")): (r[0]["step"], r[0]["compute"]) for key, r in runs.items() if r[0]}


def spread(values):
    return f"{statistics.median(values):.3g} ({min(values):.3g}–{max(values):.3g})" if values else "-"


def verdict(a, b):
    ma, mb = statistics.median(a), statistics.median(b)
    same = min(a) <= mb <= max(a) or min(b) <= ma <= max(b)
    return f"{mb / ma:.3f}", "same" if same else ("faster" if mb > ma else "slower")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", required=True, help="the dtbench binary before the change")
    parser.add_argument("--b", required=True, help="the dtbench binary after the change")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--batches", default="32,128")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--images", type=int, default=768)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--skip-single-rank", action="store_true")
    parser.add_argument("--skip-allreduce", action="store_true")
    parser.add_argument("--skip-distributed", action="store_true")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    single, allreduce, distributed = {}, {}, {}

    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "mpi_allreduce_reference")
        if not args.skip_allreduce:
            subprocess.run(["mpicc", "-O2", "-o", raw, os.path.join(HERE, "mpi_allreduce_reference.c")], check=True)
        for repeat in range(args.repeats):
            order = ["A", "B", "reference"] if repeat % 2 == 0 else ["reference", "B", "A"]
            binary = {"A": args.a, "B": args.b}
            if not args.skip_single_rank:
                for model in args.models.split(","):
                    for batch in (int(b) for b in args.batches.split(",")):
                        steps = max(4, args.images // batch)
                        r = single.setdefault(f"{model}/{batch}", {"A": [], "B": [], "reference": []})
                        for side in order:
                            if side == "reference":
                                r[side].append(run_python(model, batch, args.threads, 2, steps))
                            else:
                                r[side].append(run_dtbench(binary[side], model, batch, args.threads, 2, steps)[0])
                        print(f"repeat {repeat + 1}: {model} b{batch}: A {r['A'][-1]:.1f} B {r['B'][-1]:.1f} "
                              f"PyTorch {r['reference'][-1]:.1f} images/s", file=sys.stderr)
            if not args.skip_allreduce:
                for side in order:
                    if side == "reference":
                        rows = raw_mpi_rows(raw, args.world)
                        for key, value in rows.items():
                            allreduce.setdefault(key, {"A": [], "B": [], "reference": []})["reference"].append(value)
                        continue
                    for backend in ("gloo", "mpi"):
                        for (topology, size), value in allreduce_rows(binary[side], backend, args.world).items():
                            allreduce.setdefault((f"{topology} {backend}", size),
                                                 {"A": [], "B": [], "reference": []})[side].append(value)
                print(f"repeat {repeat + 1}: all-reduce sweeps done; load average "
                      f"{open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)
            if not args.skip_distributed:
                for side in order:
                    build_dir = os.path.dirname(os.path.abspath(binary.get(side, args.a)))
                    configs = "ddp" if side == "reference" else DISTRIBUTED_CONFIGS
                    out = os.path.join(tmp, f"distributed-{side}-{repeat}")
                    for (model, config), figures in distributed_rows(build_dir, configs, out).items():
                        r = distributed.setdefault((model, config), {"A": [], "B": [], "reference": []})
                        r[side].append(figures)
                print(f"repeat {repeat + 1}: distributed runs done; load average "
                      f"{open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)

    print(f"\nA = {args.a}, B = {args.b}; {args.repeats} alternating repeats, started {started}; "
          f"{args.threads} threads for training, {args.world} ranks for all-reduce.")
    if single:
        print("\n| model | batch | A images/s | B images/s | B/A | B vs A | PyTorch eager |")
        print("|---|---|---|---|---|---|---|")
        for key, r in single.items():
            model, batch = key.split("/")
            ratio, word = verdict(r["A"], r["B"])
            print(f"| {model} | {batch} | {spread(r['A'])} | {spread(r['B'])} | {ratio} | {word} | "
                  f"{spread(r['reference'])} |")
    if allreduce:
        print("\n| series | size | A busbw GB/s | B busbw GB/s | B/A | B vs A |")
        print("|---|---:|---|---|---|---|")
        for (series, size), r in sorted(allreduce.items()):
            if series == "raw MPI_Allreduce":
                print(f"| {series} | {size >> 10} KB | {spread(r['reference'])} | | | reference |")
                continue
            ratio, word = verdict(r["A"], r["B"])
            print(f"| {series} | {size >> 10} KB | {spread(r['A'])} | {spread(r['B'])} | {ratio} | {word} |")
    if distributed:
        print("\n| model | run | A step ms | B step ms | B/A | B vs A | A step − data ms | B step − data ms | B/A | B vs A |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (model, config), r in sorted(distributed.items()):
            ms = lambda side, i: [f[i] * 1e3 for f in r[side]]
            if config == "ddp":
                print(f"| {model} | DDP (Python), gloo | {spread(ms('reference', 0))} | | | reference | | | | |")
                continue
            cells = []
            for i in (0, 1):
                if r["A"] and r["B"]:
                    a, b = ms("A", i), ms("B", i)  # times: less is faster, so the verdict's sides swap
                    cells += [spread(a), spread(b), f"{statistics.median(b) / statistics.median(a):.3f}",
                              verdict(b, a)[1]]
                else:
                    cells += [spread(ms("A", i)), spread(ms("B", i)), "-", "failed runs"]
            print(f"| {model} | dtbench {config} | " + " | ".join(cells) + " |")
        print("\nDistributed: times, so B/A < 1 is faster; 'B vs A' says which side is faster when the ranges "
              "do not overlap.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started, "a": args.a, "b": args.b, "single_rank": single,
                       "allreduce": {f"{k[0]}@{k[1]}": v for k, v in allreduce.items()},
                       "distributed": {f"{k[0]}/{k[1]}": v for k, v in distributed.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
