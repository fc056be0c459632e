"""The arithmetic rate of single kernels on this CPU, beside the GEMM probe's (docs/benchmarks.md, "Speed of
light on the CPU"): LibTorch's square fp32 matrix products (the probe's kernel, through the BLAS LibTorch
links: MKL in PyTorch's x86 wheels) at 512 and 1024, and ResNet-18's 3x3 convolutions at each stage's
shape (batch 128, 64 channels at 32x32 to 512 at 4x4, through oneDNN), forward and forward + backward,
as GFLOP/s of the direct convolution's count (2 per multiply-add, backward 2x forward). Best of 5 after a
warm-up, THREADS intra-op threads.

Usage: scripts/torch_python scripts/bench_cpu_kernel_rates.py [THREADS]
"""
import sys
import time

import torch


def best(f, reps=5):
    f()
    fastest = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        fastest = min(fastest, time.perf_counter() - t)
    return fastest


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    torch.set_num_threads(threads)
    print(f"{threads} threads; BLAS: {torch.__config__.show().split('BLAS_INFO=')[1].split(',')[0]}")
    for n in (512, 1024):
        a, b = torch.randn(n, n), torch.randn(n, n)
        reps = 20 if n == 512 else 5
        t = best(lambda: [a @ b for _ in range(reps)])
        print(f"sgemm {n}x{n}: {reps * 2 * n ** 3 / t / 1e9:.0f} GFLOP/s")
    for channels, side in ((64, 32), (128, 16), (256, 8), (512, 4)):
        x = torch.randn(128, channels, side, side, requires_grad=True)
        w = torch.randn(channels, channels, 3, 3, requires_grad=True)
        flops = 2 * 128 * channels * side * side * channels * 9

        def train():
            y = torch.nn.functional.conv2d(x, w, padding=1)
            y.backward(torch.ones_like(y))

        forward = best(lambda: torch.nn.functional.conv2d(x, w, padding=1))
        both = best(train)
        print(f"conv 3x3 {channels}->{channels} at {side}x{side}, batch 128: forward {flops / forward / 1e9:.0f} "
              f"GFLOP/s, forward + backward {3 * flops / both / 1e9:.0f} GFLOP/s")


if __name__ == "__main__":
    main()
