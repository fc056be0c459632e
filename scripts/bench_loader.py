#!/usr/bin/python3
"""Loader throughput: dtbench's PrefetchLoader against PyTorch's DataLoader, same data, same machine.

Both sides load CIFAR-shaped training batches (128 images of 3x32x32) with the CIFAR recipe:
random crop 32 with padding 4, random horizontal flip, to float, normalize.
  dtbench:  build-dir/tests/data/bench_loader (PrefetchLoader, --workers N, one intra-op thread)
  PyTorch:  torch.utils.data.DataLoader(num_workers=N, shuffle=True, persistent_workers when N > 0)
            over the same images as PIL images (as torchvision.datasets.CIFAR10 hands them out),
            transforms RandomCrop(32, padding=4), RandomHorizontalFlip(), ToTensor(), Normalize();
            torch.set_num_threads(1) in the main process (DataLoader workers use one thread each).
The images are dtbench's synthetic training set, dumped by bench_loader --dump in the CIFAR-10
binary format. Each repeat times B batches of a fresh epoch after one warm-up repeat; the table
gives the median and the min-max of images/s over the repeats.

Usage (Debian's /usr/bin/python3 has torch and torchvision):
  scripts/torch_python scripts/bench_loader.py --bench build/tests/data/bench_loader [--workers 0 1 2]
      [--repeats 5] [--batches 100]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image

MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2023, 0.1994, 0.2010)


class CifarBinary(torch.utils.data.Dataset):
    """Records of 1 label byte + 3072 planar pixel bytes, handed out as torchvision's CIFAR10 does."""

    def __init__(self, path, transform):
        raw = np.fromfile(path, dtype=np.uint8).reshape(-1, 3073)
        self.labels = raw[:, 0].astype(np.int64)
        self.images = raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()  # HWC
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.transform(Image.fromarray(self.images[i])), int(self.labels[i])


def bench_pytorch(path, workers, repeats, batches, batch_size):
    transform = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize(MEAN, STD)])
    loader = torch.utils.data.DataLoader(CifarBinary(path, transform), batch_size=batch_size, shuffle=True,
                                         num_workers=workers, persistent_workers=workers > 0)
    rates = []
    for r in range(-1, repeats):  # -1: warm-up (also starts the persistent workers)
        start = time.perf_counter()
        images = 0
        for b, (x, y) in enumerate(loader):
            assert x.shape[1:] == (3, 32, 32) and x.dtype == torch.float32
            images += x.shape[0]
            if b + 1 == batches:
                break
        seconds = time.perf_counter() - start
        if r >= 0:
            rates.append(images / seconds)
    return rates


def bench_dtbench(bench, workers, repeats, batches, batch_size):
    out = subprocess.run([bench, "--workers", str(workers), "--repeats", str(repeats), "--batches", str(batches),
                          "--batch-size", str(batch_size), "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout
    rows = [line.split(",") for line in out.strip().splitlines()[1:]]
    return [float(row[4]) for row in rows]


def summary(rates):
    return f"{statistics.median(rates):,.0f} ({min(rates):,.0f}-{max(rates):,.0f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", required=True, help="path to the bench_loader executable")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args()
    torch.set_num_threads(1)

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "synthetic.bin")
        subprocess.run([args.bench, "--dump", data], check=True)
        print(f"# {args.batches} batches of {args.batch_size} per repeat, {args.repeats} repeats after a warm-up; "
              f"torch {torch.__version__}, {os.cpu_count()} cores")
        print("| workers | dtbench images/s, median (min-max) | PyTorch DataLoader images/s, median (min-max) | ratio |")
        print("|---|---|---|---|")
        for workers in args.workers:
            ours = bench_dtbench(args.bench, workers, args.repeats, args.batches, args.batch_size)
            theirs = bench_pytorch(data, workers, args.repeats, args.batches, args.batch_size)
            ratio = statistics.median(ours) / statistics.median(theirs)
            print(f"| {workers} | {summary(ours)} | {summary(theirs)} | {ratio:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
