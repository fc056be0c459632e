#include "trainer/step/graph/device_graph.h"

#include <stdexcept>

#include "dtbench/build_config.h"

namespace dtbench::trainer {

#if !DTBENCH_TORCH_HAS_CUDA
std::unique_ptr<DeviceGraph> cudaDeviceGraph(c10::Device) {
  throw std::invalid_argument("a CUDA graph: this build's LibTorch has no CUDA");
}
#endif

}  // namespace dtbench::trainer
