"""Single-rank training throughput: dtbench against PyTorch in Python on the same LibTorch.

Both sides train the same kuangliu/pytorch-cifar model (scripts/reference/kuangliu_models.py is
the Python definition; dtbench's C++ models match it parameter for parameter) with the same
optimizer (SGD, momentum 0.9, weight decay 5e-4), batch size and intra-op thread count, on
CIFAR-shaped inputs, each in a fresh process, alternating which goes first, repeated.

Compared: images/s of the training step without data loading, i.e. samples / sum(step_s - data_s)
from dtbench's batches.csv, against samples / sum(step time) of a Python loop over pre-built
batches (forward, cross-entropy, backward, SGD step, zero_grad, loss and accuracy read back, the
same work dtbench's step does). dtbench runs twice per repeat: with its default flags (the loader's
prefetching workers on) and with `--workers 0` (batches built on the training thread), so that
what the workers cost the step shows beside the comparison. dtbench's full rate including its
loader is reported beside it,
and so is Python run under dtbench's heap policy (trainer/memory_policy.h: glibc keeps freed
memory for reuse), which tells how much of the difference is the allocator and how much the rest.

Usage: scripts/torch_python scripts/bench_single_rank.py --dtbench build/dtbench [--repeats 5]
Prints a Markdown table and writes the raw figures as JSON (--json).

On a GPU: scripts/bench_single_rank.py --device cuda [options of scripts/bench_gpu.py] runs the GPU
comparison of scripts/bench_gpu.py instead (dtbench against PyTorch eager and CUDA graphs, every
phase timed; docs/gpu.md, "GPU speed"). --device cpu (the default) is the comparison above.
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

PYTHON_REFERENCE = r"""
import sys, json
sys.path.insert(0, sys.argv[1])
import torch
from kuangliu_models import MODELS
from timed_steps import fixed_batches, timed_steps
model_name, batch, threads, warmup, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
torch.set_num_threads(threads)
torch.manual_seed(0)
model = MODELS[model_name]()
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
times = timed_steps(model, opt, fixed_batches(batch, seed=1), warmup + steps)
print(json.dumps({"threads": torch.get_num_threads(), "step_s": times[warmup:]}))
"""


def run_dtbench(dtbench, model, batch, threads, warmup, steps, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        cmd = [dtbench, "train", "--model", model, "--dataset", "synthetic",
               "--synthetic-train-size", str(batch * (warmup + steps)), "--synthetic-test-size", "0",
               "--batch-size", str(batch), "--epochs", "1", "--max-steps", str(warmup + steps),
               "--lr", "0.02", "--threads", str(threads), "--no-eval", "--quiet", "--out", out, *extra]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "batches.csv")) as f:
            rows = list(csv.DictReader(f))[warmup:]
        with open(os.path.join(out, "config.json")) as f:
            used_threads = json.load(f)["environment"]["intra_op_threads"]
    samples = sum(int(r["samples"]) for r in rows)
    compute = sum(float(r["step_s"]) - float(r["data_s"]) for r in rows)
    total = sum(float(r["step_s"]) for r in rows)
    assert used_threads == threads, f"dtbench used {used_threads} threads, not {threads}"
    return samples / compute, samples / total


# dtbench's heap policy (trainer/memory_policy.h) as glibc environment variables.
SAME_ALLOCATOR = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "2147483647"}


def run_python(model, batch, threads, warmup, steps, same_allocator=False):
    env = dict(os.environ, **SAME_ALLOCATOR) if same_allocator else None
    result = subprocess.run([sys.executable, "-c", PYTHON_REFERENCE, os.path.join(HERE, "reference"), model,
                             str(batch), str(threads), str(warmup), str(steps)],
                            check=True, capture_output=True, text=True, env=env)
    figures = json.loads(result.stdout)
    assert figures["threads"] == threads, f"PyTorch used {figures['threads']} threads, not {threads}"
    return batch * len(figures["step_s"]) / sum(figures["step_s"])


SIDES = ("dtbench", "dtbench_with_data", "dtbench_workers0", "dtbench_workers0_with_data", "pytorch",
         "pytorch_same_allocator")


def spread(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})"


def main():
    device = argparse.ArgumentParser(add_help=False)
    device.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    known, rest = device.parse_known_args()
    if known.device == "cuda":
        sys.path.insert(0, HERE)
        import bench_gpu
        sys.exit(bench_gpu.main(["--device", "cuda", *rest]))
    sys.argv = [sys.argv[0], *rest]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtbench", default="build/dtbench")
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--batches", default="32,128")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--images", type=int, default=768, help="images timed per run (after warm-up)")
    parser.add_argument("--warmup", type=int, default=2, help="steps left out at the start of each run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default="")
    args = parser.parse_args()

    results = {}
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    for repeat in range(args.repeats):
        for model in args.models.split(","):
            for batch in (int(b) for b in args.batches.split(",")):
                steps = max(4, args.images // batch)
                r = results.setdefault(f"{model}/{batch}", {side: [] for side in SIDES})
                order = ["dtbench", "dtbench_workers0", "pytorch", "pytorch_same_allocator"]
                if repeat % 2 == 1:
                    order.reverse()
                for side in order:
                    if side.startswith("dtbench"):
                        extra = ("--workers", "0") if side == "dtbench_workers0" else ()
                        compute_rate, total_rate = run_dtbench(args.dtbench, model, batch, args.threads,
                                                               args.warmup, steps, extra)
                        r[side].append(compute_rate)
                        r[side + "_with_data"].append(total_rate)
                    else:
                        r[side].append(run_python(model, batch, args.threads, args.warmup, steps,
                                                  same_allocator=side == "pytorch_same_allocator"))
                print(f"repeat {repeat + 1}/{args.repeats} {model} batch {batch}: dtbench {r['dtbench'][-1]:.1f}, "
                      f"--workers 0 {r['dtbench_workers0'][-1]:.1f}, pytorch {r['pytorch'][-1]:.1f} images/s",
                      file=sys.stderr)

    print(f"\nSingle-rank training images/s, {args.threads} threads, median (min–max) of {args.repeats} runs, "
          f"started {started}\n")
    print("| model | batch | dtbench, default flags (step − data) | dtbench --workers 0 | default / --workers 0 | "
          "PyTorch eager (Python) | ratio (default) | PyTorch, dtbench's heap policy | ratio | "
          "dtbench incl. data (default) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, r in results.items():
        model, batch = key.split("/")
        default = statistics.median(r["dtbench"])
        workers_effect = default / statistics.median(r["dtbench_workers0"])
        ratio = default / statistics.median(r["pytorch"])
        ratio_same = default / statistics.median(r["pytorch_same_allocator"])
        print(f"| {model} | {batch} | {spread(r['dtbench'])} | {spread(r['dtbench_workers0'])} | {workers_effect:.3f} | "
              f"{spread(r['pytorch'])} | {ratio:.3f} | {spread(r['pytorch_same_allocator'])} | {ratio_same:.3f} | "
              f"{spread(r['dtbench_with_data'])} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started, "threads": args.threads, "repeats": args.repeats, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
