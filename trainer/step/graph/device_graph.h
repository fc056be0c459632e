#pragma once
// DeviceGraph: the device work of a piece of host code, recorded once and replayed (--cuda-graph,
// trainer/step/graph/graphed_train_step.h).
//
//   std::unique_ptr<DeviceGraph> g = cudaDeviceGraph(device);
//   g->capture([&] { ... queue forward, backward, the optimizer on the current stream ... });  // nothing runs
//   g->replay();  // runs what was queued, again, on the current stream
//
// A capture records kernels and copies with the addresses they had: a replay reads and writes the
// same tensors, so whatever changes between replays (the batch, the learning rate) must be written
// into those tensors before replay(), outside the capture. The host code of `body` runs once, at
// capture: a host-side decision, a read-back or an allocation outside the graph's own pool inside it
// is an error or is frozen. On the CPU there is no graph; tests supply their own DeviceGraph that
// re-runs `body` at each replay, which checks everything but the recording itself.

#include <functional>
#include <memory>

#include <c10/core/Device.h>

namespace dtbench::trainer {

class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Records the device work `body` queues on the current stream of the graph's device; runs none of
  // it. Once per graph.
  virtual void capture(const std::function<void()>& body) = 0;
  // Queues the recorded work on the current stream.
  virtual void replay() = 0;
};

// A CUDA graph on `device` (trainer/step/graph/cuda_device_graph.cpp: at::cuda::CUDAGraph). The capture runs on
// the current stream, which must not be the default (legacy) stream, in thread-local mode: the
// loader's threads may allocate pinned memory meanwhile. Throws std::invalid_argument in a build
// whose LibTorch has no CUDA or for a device that is not CUDA.
std::unique_ptr<DeviceGraph> cudaDeviceGraph(c10::Device device);

}  // namespace dtbench::trainer
