#pragma once
// NcclCommunicator: the `nccl` backend, c10d's ProcessGroupNCCL over dtbench's Store, one GPU per
// rank (docs/gpu.md). Built only with a CUDA LibTorch (DTBENCH_TORCH_HAS_CUDA); it uses the NCCL
// that LibTorch loads (PyTorch's nvidia-nccl package), never a second copy.
//
// Tensors: a tensor on this rank's GPU (device()) is communicated in place. A CPU tensor (the run's
// small control messages: the ranks' settings, host names, checksums, the rows gathered at each
// epoch end) is staged through the GPU: copied there when the operation is issued and back when it
// is waited on. All-reduce takes float32, float16 and bfloat16 (NCCL reduces all three), one tensor
// per call (a gradient bucket is one flat tensor); broadcast and all-gather take any element type.
//
// Streams and completion: an operation runs on ProcessGroupNCCL's stream for the device, after the
// work already queued on the issuing thread's current stream. wait() makes the waiting thread's
// current stream wait for it, then blocks the thread until the GPU has completed it or the deadline
// (--timeout) has passed: Work's contract (comm/work.h) is completion, and the step's communication
// times (comm_total_s) are taken on the host. After a failure or a timeout the group is aborted and
// the communicator is unusable, as for every backend.
//
// Point-to-point: send and recv are refused. The point-to-point topologies and pair averaging run
// over the CPU, and over nccl only --topology native is offered (checkBackendRunsTopology in
// comm/backends/backend.h refuses the others before any rank meets another).
//
// The GPU: cuda:deviceIndex, which the caller picks (one GPU per local rank: cudaDeviceForLocalRank in
// comm/backends/gpu_devices.h). NCCL refuses two ranks of one communicator on one GPU.

#include <chrono>
#include <memory>

#include <c10/core/Device.h>

#include "comm/communicator.h"
#include "comm/store.h"

namespace dtbench::comm {

struct NcclOptions {
  int deviceIndex = 0;
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
};

class NcclCommunicator final : public Communicator {
 public:
  // Connects every rank's NCCL communicator now (a collective over the store: every rank constructs
  // one). Throws std::runtime_error naming the rank, the GPU and NCCL's message when that fails.
  NcclCommunicator(Store store, int rank, int size, const NcclOptions& options);
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Backend backend() const override { return Backend::kNccl; }
  c10::Device device() const override { return device_; }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr allreduce(const at::Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(const at::Tensor& tensor, int root) override;
  WorkPtr allgather(const at::Tensor& output, const at::Tensor& input) override;
  WorkPtr barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_;
  int size_;
  c10::Device device_;
};

}  // namespace dtbench::comm
