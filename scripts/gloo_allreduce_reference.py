"""torch.distributed Gloo all-reduce reference for `dtbench allreduce` (Debian's /usr/bin/python3 has
torch 1.13). Run under dtbench launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); float32 sum,
same sweep and columns as dtbench allreduce (time_us: mean, max over ranks; GB = 10^9 bytes).
Usage: dtbench launch -n 2 -- scripts/torch_python scripts/gloo_allreduce_reference.py MIN MAX FACTOR WARMUP ITERS
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    lo, hi, factor, warmup, iters = (int(a) for a in sys.argv[1:6])
    torch.set_num_threads(1)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print("size,count,time_us,algbw_gbps,busbw_gbps", flush=True)
    nbytes = lo
    while nbytes <= hi:
        data = torch.ones(nbytes // 4)
        for _ in range(warmup):
            dist.all_reduce(data)
        dist.barrier()
        seconds = 0.0
        for _ in range(iters):
            data.fill_(1)
            start = time.perf_counter()
            dist.all_reduce(data)
            seconds += time.perf_counter() - start
        if data[0].item() != size:
            raise SystemExit(f"rank {rank}: wrong sum {data[0].item()}")
        worst = torch.tensor([seconds / iters * 1e6], dtype=torch.float64)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        algbw = nbytes / (worst.item() * 1e-6) / 1e9
        if rank == 0:
            # busbw = algbw x 2(N-1)/N, nccl-tests' factor, written out here: this reference runs in torch's
            # Python beside dtbench, not through it (dtbench's one home: comm/topology/ring.h, ringBusFactor).
            print(f"{nbytes},{nbytes // 4},{worst.item():.1f},{algbw:.4f},{algbw * 2 * (size - 1) / size:.4f}", flush=True)
        nbytes *= factor
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
