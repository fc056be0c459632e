#include "comm/backends/gpu_devices.h"

#include <cstdlib>
#include <stdexcept>

#include <torch/cuda.h>

#include "common/usage_error.h"
#include "dtbench/build_config.h"

namespace dtbench::comm {

int visibleGpuCount() { return DTBENCH_TORCH_HAS_CUDA ? static_cast<int>(torch::cuda::device_count()) : 0; }

void requireGpu(const std::string& what, const std::string& withoutGpu) {
  if (!DTBENCH_TORCH_HAS_CUDA)
    throw common::UsageError(what + " needs a GPU, and this build of LibTorch has no CUDA; build dtbench against "
                             "a CUDA LibTorch (docs/gpu.md)");
  if (visibleGpuCount() > 0) return;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  throw std::runtime_error(what + " needs a GPU, and no GPU is visible to this process" +
                           (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : std::string()) +
                           "; run it on a GPU node, or " + withoutGpu);
}

int cudaDeviceForLocalRank(int localRank) {
  requireGpu("a GPU rank", "run its ranks on the CPU");
  return localRank % visibleGpuCount();
}

}  // namespace dtbench::comm
