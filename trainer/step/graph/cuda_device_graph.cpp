// cudaDeviceGraph (trainer/step/graph/device_graph.h): at::cuda::CUDAGraph, captured in thread-local mode on the
// current stream, in the graph's own memory pool (the tensors the capture allocates keep their
// addresses for every replay).

#include <stdexcept>

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include "trainer/step/graph/device_graph.h"

namespace dtbench::trainer {

namespace {

class CudaDeviceGraph final : public DeviceGraph {
 public:
  explicit CudaDeviceGraph(c10::Device device) : device_(device) {}

  void capture(const std::function<void()>& body) override {
    TORCH_CHECK(!captured_, "a step graph is captured once");
    const c10::cuda::CUDAGuard guard(device_);
    TORCH_CHECK(c10::cuda::getCurrentCUDAStream(device_.index()) != c10::cuda::getDefaultCUDAStream(device_.index()),
                "a CUDA graph cannot be captured on the default stream");
    c10::cuda::device_synchronize();  // nothing queued before is pending when the capture begins
    graph_.capture_begin(/*pool=*/{0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      body();
    } catch (...) {
      try {
        graph_.capture_end();  // leaves the stream's capture mode before the error goes on
      } catch (...) {
      }
      throw;
    }
    graph_.capture_end();
    captured_ = true;
  }

  void replay() override {
    TORCH_CHECK(captured_, "replay() before capture()");
    const c10::cuda::CUDAGuard guard(device_);
    graph_.replay();
  }

 private:
  c10::Device device_;
  at::cuda::CUDAGraph graph_;
  bool captured_ = false;
};

}  // namespace

std::unique_ptr<DeviceGraph> cudaDeviceGraph(c10::Device device) {
  if (!device.is_cuda()) throw std::invalid_argument("a CUDA graph needs a CUDA device, not " + device.str());
  if (!device.has_index()) device = c10::Device(c10::kCUDA, c10::cuda::current_device());
  return std::make_unique<CudaDeviceGraph>(device);
}

}  // namespace dtbench::trainer
