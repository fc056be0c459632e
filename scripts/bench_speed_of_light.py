"""How close to the CPU's limit dtbench's training step comes, beside PyTorch eager on the same LibTorch
(docs/benchmarks.md, "Speed of light on the CPU").

For each model and per-rank batch, at 1 rank (every core's threads) and 2 ranks (one thread each),
alternating which side goes first, repeated:
  dtbench   images/s of the step without data loading (samples / sum(step_s - data_s), rank 0's rows);
            1 rank: `dtbench train`; 2 ranks: `dtbench launch -n 2 -- dtbench train` over gloo
  PyTorch   1 rank: the same step in Python under dtbench's heap policy (bench_single_rank.py's
            same-allocator reference); 2 ranks: DistributedDataParallel over Gloo (bench_ddp.py)
Both sides do the same arithmetic, so both get the same FLOPs per image: dtbench's count of the model
(models/flop_count.h, as config.json's speed_of_light records it; equal to PyTorch's FlopCounterMode for
these models' forward, and for ResNet-18's training step). Achieved GFLOP/s per rank = images/s per rank x
training FLOPs per image; the fraction is of the GEMM probe's rate with the same threads (config.json's
gemm_probe of dtbench's run: 512x512 fp32 products, the best of 0.15 s).

Then the probe itself: --probes fresh probes (each a one-step run with an empty cache), their spread and
cost; and its place in the first epoch: first-epoch T of a short run with a cold cache (the probe runs)
against a warm one (it is read), alternating.

Usage: scripts/torch_python scripts/bench_speed_of_light.py --dtbench build/dtbench [--repeats 3] [--json F]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_single_rank import run_python  # noqa: E402


def dtbench_run(dtbench, model, batch, world, threads, warmup, steps, cache=None, extra=()):
    """(images/s per rank of step - data on rank 0, config.json) of one dtbench run."""
    env = dict(os.environ, DTBENCH_CACHE_DIR=cache) if cache else None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        train = [dtbench, "train", "--model", model, "--dataset", "synthetic",
                 "--synthetic-train-size", str(batch * world * (warmup + steps)), "--synthetic-test-size", "0",
                 "--batch-size", str(batch), "--epochs", "1", "--max-steps", str(warmup + steps), "--lr", "0.02",
                 "--threads", str(threads), "--no-eval", "--quiet", "--out", out, *extra]
        cmd = [dtbench, "launch", "-n", str(world), "--"] + train if world > 1 else train
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        with open(os.path.join(out, "batches.csv")) as f:
            rows = [r for r in csv.DictReader(f) if r["rank"] == "0"][warmup:]
        with open(os.path.join(out, "config.json")) as f:
            config = json.load(f)
    samples = sum(int(r["samples"]) for r in rows)
    return samples / sum(float(r["step_s"]) - float(r["data_s"]) for r in rows), config, rows


def ddp_run(model, batch, world, threads, warmup, steps):
    result = subprocess.run([sys.executable, os.path.join(HERE, "bench_ddp.py"), "--model", model,
                             "--world-size", str(world), "--batch-size", str(batch), "--warmup", str(warmup),
                             "--steps", str(steps), "--threads", str(threads)],
                            check=True, capture_output=True, text=True)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    return batch * len(figures["step_s"]) / sum(figures["step_s"])


def spread(values, fmt="{:.1f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtbench", default="build/dtbench")
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--batches", default="32,128")
    parser.add_argument("--worlds", default="1,2")
    parser.add_argument("--images", type=int, default=384, help="images timed per rank and run")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--probes", type=int, default=5)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    cores = os.cpu_count()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    results = []
    for world in (int(w) for w in args.worlds.split(",")):
        threads = max(1, cores // world)
        for model in args.models.split(","):
            for batch in (int(b) for b in args.batches.split(",")):
                steps = max(2, args.images // batch)
                point = {"model": model, "batch": batch, "world": world, "threads": threads,
                         "dtbench": [], "pytorch": [], "probe_gflops": [], "flops": None}
                for repeat in range(args.repeats):
                    order = ("dtbench", "pytorch") if repeat % 2 == 0 else ("pytorch", "dtbench")
                    for side in order:
                        if side == "dtbench":
                            rate, config, _ = dtbench_run(args.dtbench, model, batch, world, threads, args.warmup,
                                                          steps)
                            sol = config["speed_of_light"]
                            point["flops"] = sol["flops_per_image"]["training"]
                            point["probe_gflops"].append(sol["gemm_probe"]["gflops"])
                            point["dtbench"].append(rate)
                        elif world == 1:
                            point["pytorch"].append(run_python(model, batch, threads, args.warmup, steps,
                                                               same_allocator=True))
                        else:
                            point["pytorch"].append(ddp_run(model, batch, world, threads, args.warmup, steps))
                    print(f"{model} b{batch} N={world} repeat {repeat + 1}: dtbench {point['dtbench'][-1]:.1f} "
                          f"img/s, PyTorch {point['pytorch'][-1]:.1f}", file=sys.stderr)
                results.append(point)

    print(f"\nAchieved training GFLOP/s per rank and fraction of the GEMM probe, {cores} cores, median (min–max) "
          f"of {args.repeats} alternating runs, {started}")
    print("\n| model | batch | N | threads/rank | GFLOP/image | dtbench GFLOP/s | PyTorch GFLOP/s | probe GFLOP/s | "
          "dtbench of probe | PyTorch of probe | dtbench / PyTorch |")
    print("|---|---:|---:|---:|---:|---|---|---:|---|---|---:|")
    for p in results:
        g = p["flops"] / 1e9
        probe = statistics.median(p["probe_gflops"])
        d = [r * g for r in p["dtbench"]]
        t = [r * g for r in p["pytorch"]]
        print(f"| {p['model']} | {p['batch']} | {p['world']} | {p['threads']} | {g:.4f} | {spread(d)} | {spread(t)} | "
              f"{probe:.1f} | {spread([x / probe for x in d], '{:.3f}')} | {spread([x / probe for x in t], '{:.3f}')} | "
              f"{statistics.median(d) / statistics.median(t):.3f} |")

    # The probe: fresh measurements (an empty cache each time), their spread and cost.
    probes = []
    for _ in range(args.probes):
        with tempfile.TemporaryDirectory() as cache:
            _, config, _ = dtbench_run(args.dtbench, "lenet", 32, 1, cores, 0, 1, cache=cache)
            probes.append(config["speed_of_light"]["gemm_probe"])
    rates = [p["gflops"] for p in probes]
    cost = [p["seconds"] for p in probes]
    print(f"\nGEMM probe, {cores} threads, {args.probes} fresh probes: {spread(rates)} GFLOP/s "
          f"(spread {100 * (max(rates) - min(rates)) / statistics.median(rates):.1f}% of the median), "
          f"cost {spread(cost, '{:.3f}')} s")

    # Its place in the first epoch: T of the first epoch (all its steps) with a cold cache and a warm one.
    first = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as warm:
        dtbench_run(args.dtbench, "resnet18", 32, 1, cores, 0, 1, cache=warm)  # fills the warm cache
        for repeat in range(args.repeats * 2):
            for kind in (("cold", "warm") if repeat % 2 == 0 else ("warm", "cold")):
                with tempfile.TemporaryDirectory() as cold:
                    _, _, rows = dtbench_run(args.dtbench, "resnet18", 32, 1, cores, 0, 6,
                                             cache=cold if kind == "cold" else warm)
                first[kind].append(sum(float(r["step_s"]) - float(r["data_s"]) for r in rows))
    print(f"First epoch's T (resnet18 b32, 6 steps, {cores} threads, {args.repeats * 2} alternating runs): "
          f"probe measured (cold cache) {spread(first['cold'], '{:.3f}')} s, read (warm) "
          f"{spread(first['warm'], '{:.3f}')} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started, "cores": cores, "results": results, "probes": probes,
                       "first_epoch": first}, f, indent=1)


if __name__ == "__main__":
    main()
