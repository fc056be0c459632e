"""PyTorch's side of the PowerSGD comparison (tests/trainer/sync/test_powersgd_reference.sh): two
processes train the reference LeNet (scripts/reference/kuangliu_models.py) under
DistributedDataParallel over Gloo with PyTorch's own powerSGD_hook, from the parameters and on the
batches tests/trainer/sync/powersgd_trajectory.cpp used, and compare every step's loss on both ranks
and the final parameters with dtbench's.

PyTorch draws its first Q from its own generator; the hook is started from dtbench's instead (the
issue's terms): a CPU generator seeded (seed x 1000003 + bucket + 1) mod 2^64, one standard normal
m x r draw per compressed gradient in bucket order, each orthogonalized
(trainer/sync/powersgd.h), put in the hook's warm-start memory before its first compressed step.

Usage: scripts/torch_python powersgd_reference.py DTBENCH_OUTDIR STEPS RANK START SEED
Prints the largest differences; exits 1 when one is beyond the stated tolerance.
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "reference"))
from kuangliu_models import MODELS  # noqa: E402

BATCH = 8
LR = 0.05
# Stated tolerances: the two sides add the same numbers in other orders (the uncompressed average
# divides before the sum in PyTorch, after it in dtbench; Gloo's and dtbench's reductions differ), so
# they agree to float32 rounding, which PowerSGD's orthogonalization and the training amplify a little
# from step to step.
LOSS_TOLERANCE = 1e-4      # absolute, every step of both ranks
PARAMETER_TOLERANCE = 1e-4  # absolute, largest over the final parameters


def batch_of(step, rank):
    generator = torch.Generator().manual_seed(1000 * step + rank)
    images = torch.randn(BATCH, 3, 32, 32, generator=generator)
    labels = torch.randint(0, 10, (BATCH,), generator=generator)
    return images, labels


def load_parameters(path, model):
    flat = torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.float32)
    offset = 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
    if offset != flat.numel():
        raise SystemExit(f"{path}: {flat.numel()} values for {offset} parameters")
    return flat


def q_seed(seed, bucket):
    return (seed * 1000003 + bucket + 1) % 2**64


def dtbench_first_q(bucket, rank, seed):
    """dtbench's first Q of every compressed gradient in `bucket`, concatenated as the hook keeps them."""
    generator = torch.Generator().manual_seed(q_seed(seed, bucket.index()))
    ps, qs = 0, []
    for tensor in bucket.gradients():
        n, m = tensor.shape[0], tensor.numel() // tensor.shape[0]
        r = min(n, m, rank)
        if tensor.dim() < 2 or not powersgd._should_compress(n, m, r, 2)[0]:
            continue
        q = torch.randn(m, r, generator=generator)
        powersgd._orthogonalize(q.unsqueeze(0))
        qs.append(q.reshape(-1))
        ps += n * r
    return torch.empty(ps), torch.cat(qs)


def train(rank, world, directory, steps, matrix_rank, start, seed, store, results):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    model = MODELS["lenet"]()
    load_parameters(os.path.join(directory, "initial.bin"), model)
    ddp = DistributedDataParallel(model)
    state = powersgd.PowerSGDState(process_group=None, matrix_approximation_rank=matrix_rank,
                                   start_powerSGD_iter=start, min_compression_rate=2, use_error_feedback=True,
                                   warm_start=True, orthogonalization_epsilon=0)

    def hook(state, bucket):
        if state.iter == start and bucket.index() not in state.p_memory_dict:
            p, q = dtbench_first_q(bucket, matrix_rank, seed)
            state.p_memory_dict[bucket.index()] = p
            state.q_memory_dict[bucket.index()] = q
        return powersgd.powerSGD_hook(state, bucket)

    ddp.register_comm_hook(state, hook)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=LR)
    losses = []
    for step in range(1, steps + 1):
        images, labels = batch_of(step, rank)
        optimizer.zero_grad()
        loss = F.cross_entropy(ddp(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    # As bytes: a tensor would travel as shared memory that this process takes away when it ends.
    final = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy().tobytes()
    results.put((rank, losses, final))
    dist.destroy_process_group()


def main():
    if len(sys.argv) not in (6, 7):
        raise SystemExit("usage: powersgd_reference.py OUTDIR STEPS RANK START SEED [WORLD]")
    directory, steps, matrix_rank, start, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    world = int(sys.argv[6]) if len(sys.argv) == 7 else 2
    store = tempfile.mktemp(prefix="powersgd_reference_store_")
    context = mp.get_context("spawn")
    results = context.Queue()
    processes = [context.Process(target=train, args=(r, world, directory, steps, matrix_rank, start, seed, store, results))
                 for r in range(world)]
    for p in processes:
        p.start()
    outcome = {}
    for _ in range(world):
        rank, losses, final = results.get(timeout=300)
        outcome[rank] = (losses, torch.frombuffer(bytearray(final), dtype=torch.float32))
    for p in processes:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a PyTorch rank exited {p.exitcode}")
    if os.path.exists(store):
        os.remove(store)
    dtbench_losses = {}
    with open(os.path.join(directory, "losses.csv")) as f:
        next(f)
        for line in f:
            step, rank, loss = line.strip().split(",")
            dtbench_losses[(int(step), int(rank))] = float(loss)
    worst_loss, worst_at = 0.0, None
    for rank in range(world):
        for step, loss in enumerate(outcome[rank][0], start=1):
            difference = abs(loss - dtbench_losses[(step, rank)])
            if difference > worst_loss:
                worst_loss, worst_at = difference, (step, rank)
    final = torch.frombuffer(bytearray(open(os.path.join(directory, "final.bin"), "rb").read()), dtype=torch.float32)
    worst_parameter = (final - outcome[0][1]).abs().max().item()
    moved = (final - load_parameters(os.path.join(directory, "initial.bin"), MODELS["lenet"]())).abs().max().item()
    print(f"{world} ranks, {steps} steps (PowerSGD rank {matrix_rank} from step {start + 1}): largest loss difference "
          f"{worst_loss:.3g} (step, rank {worst_at}), largest final-parameter difference {worst_parameter:.3g} "
          f"(the parameters moved up to {moved:.3g}); tolerances {LOSS_TOLERANCE:g} and {PARAMETER_TOLERANCE:g}")
    if worst_loss > LOSS_TOLERANCE or worst_parameter > PARAMETER_TOLERANCE:
        print("FAIL: dtbench's PowerSGD left PyTorch's trajectory", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
