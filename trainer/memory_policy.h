#pragma once
// applyMemoryPolicy: how this process's heap treats freed memory while it trains.
//
// Note [Keeping freed memory]
// LibTorch's CPU allocator takes every tensor from malloc and gives it back at once. glibc serves
// blocks above its mmap threshold with fresh mmap() calls and unmaps them on free, and trims the
// heap top back to the OS, so every training step page-faults its activations in again: on
// 2 cores that was a third of MobileNetV2's step time at batch 128 (docs/benchmarks.md). dtbench
// therefore tells glibc to serve everything from the heap (M_MMAP_MAX = 0) and never to trim it
// (M_TRIM_THRESHOLD = INT_MAX): freed blocks are reused by the next step. The process keeps its
// peak footprint instead of returning memory between steps. DTBENCH_MALLOC=system in the
// environment leaves glibc's defaults alone.

#include <string>

namespace dtbench::trainer {

// Applies the policy (idempotent) and returns its description for config.json.
std::string applyMemoryPolicy();

}  // namespace dtbench::trainer
