#pragma once
// PeakMemory: the most memory this rank has held so far (summary.json's "peak_host_bytes" and
// "peak_gpu_bytes", per rank; docs/run-directory.md): the process's peak resident set (getrusage's
// ru_maxrss: the host memory the kernel's out-of-memory killer and a Slurm --mem limit count) and, on a
// GPU, the peak of the bytes LibTorch's caching allocator handed out on the rank's device (what
// torch.cuda.max_memory_allocated reports; the allocator reserves more than that from the driver). The
// largest batch that fits is read from these.

#include <cstdint>
#include <optional>

#include <c10/core/Device.h>

namespace dtbench::trainer {

struct PeakMemory {
  int64_t hostBytes = 0;
  std::optional<int64_t> gpuBytes;  // on a GPU only
};

PeakMemory peakMemory(c10::Device device);

// The caching allocator's peak allocated bytes on GPU `index` (CUDA builds: trainer/record/cuda_device_facts.cpp).
// Throws std::runtime_error in a build whose LibTorch has no CUDA.
int64_t cudaPeakAllocatedBytes(int index);

}  // namespace dtbench::trainer
