#!/usr/bin/env python3
"""S-SGD step time of PyTorch's DistributedDataParallel (torch.distributed Gloo), the reference for
dtbench's distributed training step.

Every rank trains the same kuangliu/pytorch-cifar model (scripts/reference/kuangliu_models.py, the
Python definition of dtbench's zoo) wrapped in DistributedDataParallel with its defaults
(bucket_cap_mb=25, broadcast_buffers=True: BatchNorm buffers go from rank 0 to every rank at each
forward), SGD lr 0.1, momentum 0.9, weight decay 5e-4, one intra-op thread. The data are random
CIFAR-shaped batches built once before the loop, so loading costs nothing. A step is forward,
cross-entropy, backward (gradients all-reduced in buckets during backward), optimizer step,
zero_grad, loss and accuracy read back: the work of dtbench's step apart from its loader wait.
W warm-up steps are left out; the S timed steps of rank 0 are reported.

Usage: scripts/torch_python scripts/bench_ddp.py --model resnet18 [--world-size 2] [--batch-size 16]
           [--warmup 3] [--steps 20] [--threads 1] [--no-broadcast-buffers]
Without RANK in the environment it starts --world-size ranks of itself (local processes, a free
port on 127.0.0.1, GLOO_SOCKET_IFNAME=lo unless set) and prints rank 0's JSON line on stdout:
  {"model", "world_size", "batch_size", "threads", "warmup", "broadcast_buffers",
   "step_s": [S per-step seconds], "median_step_s",
   "ddp_logging": {DDP's own runtime statistics, ns (avg_backward_comm_time: first bucket
                   launched to last bucket reduced; avg_backward_compute_comm_overlap_time: first
                   bucket launched to end of backward), averaged over the iterations DDP samples
                   for them, which can include the warm-up steps}}
With RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (e.g. under `dtbench launch -n 2 --`) it
runs as that rank.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16, help="per rank")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-broadcast-buffers", action="store_true",
                        help="DDP(broadcast_buffers=False): BatchNorm statistics stay local (dtbench --local-bn-stats)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds the whole job may take")
    return parser.parse_args()


def run_rank(args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    sys.path.insert(0, os.path.join(HERE, "reference"))
    from kuangliu_models import MODELS
    from timed_steps import fixed_batches, timed_steps

    torch.set_num_threads(args.threads)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)  # same initial weights on every rank (DDP broadcasts rank 0's anyway)
    model = DistributedDataParallel(MODELS[args.model](), bucket_cap_mb=25,
                                    broadcast_buffers=not args.no_broadcast_buffers)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    batches = fixed_batches(args.batch_size, seed=1 + rank)

    dist.barrier()
    times = timed_steps(model, opt, batches, args.warmup + args.steps)

    logging = {}
    try:
        logged = model._get_ddp_logging_data()
        logging = {k: v for k, v in logged.items() if k.startswith("avg_") or k in ("bucket_sizes",)}
    except Exception:  # private API: leave it out where this torch lacks it
        pass
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        step_s = times[args.warmup:]
        print(json.dumps({"model": args.model, "world_size": world, "batch_size": args.batch_size,
                          "threads": torch.get_num_threads(), "warmup": args.warmup,
                          "broadcast_buffers": not args.no_broadcast_buffers, "step_s": step_s,
                          "median_step_s": statistics.median(step_s), "ddp_logging": logging}), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    """Start world-size ranks of this script; print rank 0's result; fail if any rank fails."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               WORLD_SIZE=str(args.world_size))
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    procs = []
    for rank in range(args.world_size):
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                                      env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank)),
                                      stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL, text=True))
    deadline = time.monotonic() + args.timeout
    failed = None
    while failed is None and any(p.poll() is None for p in procs):
        failed = next((r for r, p in enumerate(procs) if p.poll() not in (None, 0)), None)
        if time.monotonic() > deadline:
            failed = "timeout"
        time.sleep(0.2)
    if failed is None:
        failed = next((r for r, p in enumerate(procs) if p.returncode != 0), None)
    if failed is not None:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
        sys.exit(f"bench_ddp.py: rank {failed} failed (exit codes {[p.returncode for p in procs]})")
    sys.stdout.write(procs[0].stdout.read())


def main():
    args = parse_args()
    if "RANK" in os.environ:
        run_rank(args)
    else:
        launch(args)


if __name__ == "__main__":
    main()
