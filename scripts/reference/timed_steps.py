"""The Python side of dtbench's step benchmarks: the same work as dtbench's training step.

fixed_batches builds CIFAR-shaped batches once (no loader in the timed loop); timed_steps runs
forward, cross-entropy, backward, optimizer step, zero_grad, and reads loss and accuracy back (as
dtbench's step does), and returns each step's wall time in seconds.
"""
import time

import torch
import torch.nn.functional as F


def fixed_batches(batch_size, seed, count=4):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch_size, 3, 32, 32, generator=g), torch.randint(0, 10, (batch_size,), generator=g))
            for _ in range(count)]


def timed_steps(model, optimizer, batches, steps):
    times = []
    for step in range(steps):
        x, y = batches[step % len(batches)]
        t0 = time.perf_counter()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss.item()
        (out.argmax(1) == y).sum().item()
        times.append(time.perf_counter() - t0)
    return times
