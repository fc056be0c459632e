#include "trainer/record/peak_memory.h"

#include <sys/resource.h>

#include <stdexcept>

#include "dtbench/build_config.h"

namespace dtbench::trainer {

#if !DTBENCH_TORCH_HAS_CUDA
int64_t cudaPeakAllocatedBytes(int) {
  throw std::runtime_error("this build's LibTorch has no CUDA: no GPU memory to measure");
}
#endif

PeakMemory peakMemory(c10::Device device) {
  PeakMemory peak;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) peak.hostBytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  if (device.is_cuda()) peak.gpuBytes = cudaPeakAllocatedBytes(device.has_index() ? device.index() : 0);
  return peak;
}

}  // namespace dtbench::trainer
