#!/usr/bin/python3
"""Writes a synthetic cluster trace in the Helios layout (docs/report.md, "Job traces"), for testing
and benchmarking `dtbench report --trace`.

Usage: /usr/bin/python3 generate_trace.py N OUT.csv [--seed S]   (standard library only)

The same N and seed always write the same file. Each of the N jobs is drawn independently:
- submit_time: a Poisson arrival process from 2026-01-01 00:00:00, mean gap 30 s;
- gpu_num: from the fixed mix 1: 60%, 2: 10%, 4: 12%, 8: 12%, 16: 4%, 32: 2%; cpu_num = 4 per GPU;
  node_num = ceil(gpu_num / 8);
- state: COMPLETED 62%, FAILED 8%, TIMEOUT 2%, NODE_FAIL 2%, CANCELLED 26%;
- queueing delay (start − submit): 0 s with probability 30%, else exponential with mean
  600 s · sqrt(gpu_num), rounded to whole seconds;
- duration: log-normal, median 600 s (mu = ln 600), sigma 2.0, rounded to whole seconds and
  clipped to [1 s, 14 days]; end_time = start_time + duration;
- job_id `job<i>`, user `u<0..199>`, queue `vc<1..8>`, uniform.
Times are written as `YYYY-MM-DD HH:MM:SS` (read them with TZ=UTC for the same Unix seconds).
"""
import argparse
import math
import random
import time

GPU_MIX = [(1, 0.60), (2, 0.10), (4, 0.12), (8, 0.12), (16, 0.04), (32, 0.02)]
STATES = [("COMPLETED", 0.62), ("FAILED", 0.08), ("TIMEOUT", 0.02), ("NODE_FAIL", 0.02), ("CANCELLED", 0.26)]
START = 1767225600  # 2026-01-01 00:00:00 UTC
HEADER = "job_id,user,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"


def pick(rng, mix):
    u, acc = rng.random(), 0.0
    for value, p in mix:
        acc += p
        if u < acc:
            return value
    return mix[-1][0]


def stamp(seconds):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jobs", type=int)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    t = float(START)
    with open(args.out, "w") as out:
        out.write(HEADER)
        for i in range(args.jobs):
            t += rng.expovariate(1 / 30)
            submit = int(t)
            gpus = pick(rng, GPU_MIX)
            state = pick(rng, STATES)
            queue = 0 if rng.random() < 0.3 else round(rng.expovariate(1 / (600 * math.sqrt(gpus))))
            duration = min(max(round(rng.lognormvariate(math.log(600), 2.0)), 1), 14 * 86400)
            start = submit + queue
            out.write(f"job{i},u{rng.randrange(200)},{gpus},{4 * gpus},{(gpus + 7) // 8},{state},{stamp(submit)},"
                      f"{stamp(start)},{stamp(start + duration)},{duration},vc{rng.randrange(1, 9)}\n")


if __name__ == "__main__":
    main()
