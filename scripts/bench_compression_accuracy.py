"""Final test accuracy with gradient compression beside none, dtbench against PyTorch's own DDP hooks on
the same task (docs/benchmarks.md, "Gradient compression": accuracy).

The task: LeNet (one input channel) on Fashion-MNIST (Debian's dataset-fashion-mnist), 28x28 padded to
32x32 and normalized by the training set's mean and standard deviation, random crop (pad 4) and
horizontal flip, SGD with momentum 0.9 and weight decay 5e-4 at a constant learning rate, a batch per
rank, every epoch's shuffle split over the ranks, the 10,000 test images after each epoch.
  dtbench   `dtbench launch -n N -- dtbench train --model lenet --dataset fashion-mnist ... --compress C`
            (PowerSGD: --compress-rank R --compress-start K)
  PyTorch   DistributedDataParallel over Gloo on the CPU, one thread a rank, with `fp16_compress_hook`,
            `bf16_compress_hook` or `powerSGD_hook` (PowerSGDState(matrix_approximation_rank=R,
            start_powerSGD_iter=K, use_error_feedback=True, warm_start=True)); none: no hook
The two draw their data order, augmentation and initial weights from their own random streams, so a
seed is a replica, not the same run: compare means over seeds. Every finished run is kept under OUT and
not run again, so an interrupted measurement continues where it stopped.

Usage: scripts/torch_python scripts/bench_compression_accuracy.py --dtbench build/dtbench --out DIR
         [--world 2,4] [--compress none,powersgd] [--seeds 1-5] [--sides dtbench,pytorch]
         [--epochs 3] [--lr 0.05] [--batch 32] [--rank 2] [--start 2] [--data-dir DIR]
Writes DIR/accuracy.md (per run, then mean, standard deviation and range per configuration, and each
compression's difference from none) and prints it.
"""
import argparse
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import time

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    import numpy as np
    import torch
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return torch.from_numpy(np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims).copy())


def idx_file(directory, name):
    for candidate in (os.path.join(directory, name + ".gz"), os.path.join(directory, name)):
        if os.path.exists(candidate):
            return candidate
    raise SystemExit(f"Fashion-MNIST file {name}[.gz] is missing in {directory}: install Debian's "
                     "dataset-fashion-mnist or give --data-dir")


def pytorch_rank(rank, a, port, out):
    """One rank of the PyTorch reference; rank 0 writes `out` (JSON: every epoch's loss and accuracy)."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
    from torch.nn.parallel import DistributedDataParallel

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
    from kuangliu_models import LeNet

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", rank=rank, world_size=a.world_now)
    train_x = read_idx(idx_file(a.data_dir, "train-images-idx3-ubyte"))
    train_y = read_idx(idx_file(a.data_dir, "train-labels-idx1-ubyte")).long()
    test_x = read_idx(idx_file(a.data_dir, "t10k-images-idx3-ubyte"))
    test_y = read_idx(idx_file(a.data_dir, "t10k-labels-idx1-ubyte")).long()
    pixels = train_x.double() / 255
    mean, std = pixels.mean().item(), pixels.std(unbiased=False).item()
    train_x = F.pad(train_x, (2, 2, 2, 2)).unsqueeze(1)
    test_x = F.pad(test_x, (2, 2, 2, 2)).unsqueeze(1)
    padded = F.pad(train_x, (4, 4, 4, 4))

    def normalize(u8):
        return (u8.float() / 255 - mean) / std

    torch.manual_seed(a.seed_now)
    model = DistributedDataParallel(LeNet(in_channels=1))
    if a.compress_now == "powersgd":
        state = powersgd.PowerSGDState(process_group=None, matrix_approximation_rank=a.rank,
                                       start_powerSGD_iter=a.start, use_error_feedback=True, warm_start=True,
                                       random_seed=a.seed_now)
        model.register_comm_hook(state, powersgd.powerSGD_hook)
    elif a.compress_now in ("fp16", "bf16"):
        model.register_comm_hook(None, getattr(default_hooks, a.compress_now + "_compress_hook"))
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
    n = train_x.size(0)
    per_rank = (n + a.world_now - 1) // a.world_now
    augment = torch.Generator().manual_seed(a.seed_now * 1000 + rank)
    epochs = []
    for epoch in range(a.epochs):
        order = torch.randperm(n, generator=torch.Generator().manual_seed(a.seed_now + epoch))
        order = torch.cat([order, order[: per_rank * a.world_now - n]])[rank::a.world_now]
        model.train()
        seen, loss_sum = 0, 0.0
        for b in range(0, order.numel(), a.batch):
            ids = order[b:b + a.batch]
            k = ids.numel()
            dx = torch.randint(0, 9, (k,), generator=augment)
            dy = torch.randint(0, 9, (k,), generator=augment)
            flip = torch.rand(k, generator=augment) < 0.5
            images = torch.empty(k, 1, 32, 32, dtype=torch.uint8)
            source = padded[ids]
            for i in range(k):
                crop = source[i, :, dy[i]:dy[i] + 32, dx[i]:dx[i] + 32]
                images[i] = crop.flip(-1) if flip[i] else crop
            loss = F.cross_entropy(model(normalize(images)), train_y[ids])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * k
            seen += k
        model.eval()
        correct = 0
        with torch.no_grad():
            for b in range(0, test_x.size(0), 500):
                correct += (model(normalize(test_x[b:b + 500])).argmax(1) == test_y[b:b + 500]).sum().item()
        epochs.append({"epoch": epoch + 1, "train_loss": loss_sum / seen, "test_accuracy": correct / test_x.size(0)})
    if rank == 0:
        with open(out + ".tmp", "w") as f:
            json.dump({"torch": torch.__version__, "epochs": epochs}, f, indent=1)
        os.replace(out + ".tmp", out)
    dist.destroy_process_group()


def run_pytorch(a, world, compress, seed, out):
    import torch.multiprocessing as mp
    from bench_ddp import free_port
    a.world_now, a.compress_now, a.seed_now = world, compress, seed
    mp.spawn(pytorch_rank, args=(a, free_port(), out), nprocs=world, join=True)


def run_dtbench(a, world, compress, seed, directory):
    command = [a.dtbench, "launch", "-n", str(world), "--", a.dtbench, "train", "--model", "lenet", "--dataset",
               "fashion-mnist", "--data-dir", a.data_dir, "--epochs", str(a.epochs), "--lr", str(a.lr), "--seed",
               str(seed), "--batch-size", str(a.batch), "--threads", "1", "--workers", "1", "--quiet",
               "--compress", compress, "--out", directory]
    if compress == "powersgd":
        command += ["--compress-rank", str(a.rank), "--compress-start", str(a.start)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def run_complete(dtbench, path):
    """Whether the run in `path` did all it was asked, as `dtbench status` says (its "complete" fact);
    False for a directory that holds no run."""
    got = subprocess.run([dtbench, "status", "--json", path], capture_output=True, text=True)
    return got.returncode == 0 and json.loads(got.stdout)["complete"]


def epochs_of(a, side, path):
    """Every epoch's (train_loss, test_accuracy) of a finished run, or None."""
    try:
        if side == "dtbench":
            if not run_complete(a.dtbench, path):
                return None
            epochs = json.load(open(os.path.join(path, "summary.json")))["epochs"]
        else:
            epochs = json.load(open(path))["epochs"]
        return [(e["train_loss"], e["test_accuracy"]) for e in epochs]
    except (OSError, ValueError, KeyError):
        return None


def seeds_of(text):
    """"1-5,8" -> [1, 2, 3, 4, 5, 8]; a SystemExit naming --seeds otherwise."""
    seeds = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        if not (first.isdigit() and (last == "" or last.isdigit())):
            raise SystemExit(f"--seeds: whole numbers and ranges such as 1-5,8, got {text!r}")
        seeds += range(int(first), int(last or first) + 1)
    if not seeds:
        raise SystemExit(f"--seeds {text!r} names no seed")
    return seeds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtbench", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--world", default="2,4")
    p.add_argument("--compress", default="none,powersgd")
    p.add_argument("--seeds", default="1-5")
    p.add_argument("--sides", default="dtbench,pytorch")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--rank", type=int, default=2)
    p.add_argument("--start", type=int, default=2)
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    a = p.parse_args()
    if not all(w.isdigit() and int(w) >= 2 for w in a.world.split(",")):
        raise SystemExit(f"--world: rank counts of 2 or more, comma-separated, got {a.world!r}")
    worlds = [int(w) for w in a.world.split(",")]
    compressions = a.compress.split(",")
    seeds = seeds_of(a.seeds)
    sides = a.sides.split(",")
    for side in sides:
        if side not in ("dtbench", "pytorch"):
            raise SystemExit(f"--sides: dtbench or pytorch, got {side}")
    for c in compressions:
        if c not in ("none", "fp16", "bf16", "powersgd"):
            raise SystemExit(f"--compress: none, fp16, bf16 or powersgd, got {c}")
    # The ranges dtbench train takes (run/config_schema.cpp), checked before anything trains.
    if a.epochs < 1:
        raise SystemExit(f"--epochs: 1 or more, got {a.epochs}")
    if not (math.isfinite(a.lr) and a.lr > 0):
        raise SystemExit(f"--lr: a finite number > 0, got {a.lr}")
    if not 1 <= a.batch <= 2147483647:
        raise SystemExit(f"--batch: from 1 to 2147483647 per rank, got {a.batch}")
    if not 1 <= a.rank <= 1024:
        raise SystemExit(f"--rank: PowerSGD's rank, from 1 to 1024, got {a.rank}")
    if a.start < 2:
        raise SystemExit(f"--start: PowerSGD's first compressed step, 2 or more (PyTorch's start_powerSGD_iter with "
                         f"error feedback and warm start), got {a.start}")
    os.makedirs(a.out, exist_ok=True)

    def path_of(side, world, compress, seed):
        name = f"{side}-n{world}-{compress}-s{seed}"
        return os.path.join(a.out, name + (".json" if side == "pytorch" else ""))

    for seed in seeds:  # seeds outermost: an interrupted measurement leaves whole seeds
        for world in worlds:
            for side in sides:
                for compress in compressions:
                    path = path_of(side, world, compress, seed)
                    if epochs_of(a, side, path) is not None:
                        continue
                    print(f"[{time.strftime('%H:%M:%S')}] {side} N={world} {compress} seed {seed}", file=sys.stderr)
                    if side == "dtbench":
                        subprocess.run(["rm", "-rf", path], check=True)
                        run_dtbench(a, world, compress, seed, path)
                    else:
                        run_pytorch(a, world, compress, seed, path)

    setup = (f"LeNet, Fashion-MNIST, {a.epochs} epochs, lr {a.lr}, batch {a.batch} per rank"
             + (f", PowerSGD rank {a.rank} from step {a.start + 1}" if "powersgd" in compressions else ""))
    lines = ["# Final test accuracy with gradient compression", "", setup + ".", "",
             "| side | N | compress | seed | test accuracy per epoch (%) | final train loss |", "|---|---:|---|---:|---|---:|"]
    finals = {}
    for side in sides:
        for world in worlds:
            for compress in compressions:
                for seed in seeds:
                    epochs = epochs_of(a, side, path_of(side, world, compress, seed))
                    lines.append(f"| {side} | {world} | {compress} | {seed} | "
                                 + " / ".join(f"{100 * e[1]:.2f}" for e in epochs) + f" | {epochs[-1][0]:.4f} |")
                    finals.setdefault((side, world, compress), []).append(epochs[-1])
    lines += ["", "| side | N | compress | seeds | final accuracy: mean | std | min-max | against none | "
              "final train loss: mean | against none |", "|---|---:|---|---:|---:|---:|---|---:|---:|---:|"]
    for (side, world, compress), runs in finals.items():
        accuracy = [100 * r[1] for r in runs]
        loss = [r[0] for r in runs]
        base = finals.get((side, world, "none"))
        versus = versus_loss = "-"
        if base and compress != "none":
            versus = f"{statistics.mean(accuracy) - statistics.mean(100 * r[1] for r in base):+.2f}"
            versus_loss = f"{statistics.mean(loss) - statistics.mean(r[0] for r in base):+.4f}"
        spread = f"{statistics.stdev(accuracy):.2f}" if len(accuracy) > 1 else "-"
        lines.append(f"| {side} | {world} | {compress} | {len(runs)} | {statistics.mean(accuracy):.2f} | {spread} | "
                     f"{min(accuracy):.2f}-{max(accuracy):.2f} | {versus} | {statistics.mean(loss):.4f} | {versus_loss} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "accuracy.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
