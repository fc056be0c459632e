#include "comm/backends/nccl_communicator.h"

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "comm/tensor_element_type.h"

namespace dtbench::comm {
namespace {

std::string ncclMessageOf(const std::exception& e) {
  if (const auto* c10Error = dynamic_cast<const c10::Error*>(&e)) return c10Error->what_without_backtrace();
  return e.what();
}

std::string describeNcclFailure(const std::string& operation, int self, const c10::Device& device, const std::string& what) {
  return "nccl " + operation + " on rank " + std::to_string(self) + " (" + device.str() + ") " + what +
         "; the run cannot continue (check that every rank is alive and runs the same collectives)";
}

// The tensor an operation works on: `tensor` itself when it is on `device`, else a copy there
// (made on the current stream, so NCCL's stream is ordered after it).
at::Tensor onDevice(const at::Tensor& tensor, const c10::Device& device, const char* operation) {
  if (!tensor.defined()) throw std::invalid_argument(std::string("nccl ") + operation + ": the tensor is undefined");
  if (!tensor.is_contiguous())
    throw std::invalid_argument(std::string("nccl ") + operation + ": tensors must be contiguous (call .contiguous())");
  if (tensor.device() == device) return tensor;
  if (!tensor.device().is_cpu())
    throw std::invalid_argument(std::string("nccl ") + operation + ": the tensor is on " + tensor.device().str() +
                                ", this rank communicates on " + device.str() + " (or stages CPU tensors through it)");
  return tensor.to(device);
}

class NcclWork final : public Work {
 public:
  NcclWork(c10::intrusive_ptr<c10d::Work> work, std::string operation, int self, c10::Device device,
           std::chrono::milliseconds timeout, at::Tensor staged, at::Tensor host,
           c10::intrusive_ptr<c10d::ProcessGroupNCCL> group, std::shared_ptr<std::atomic<bool>> failed)
      : work_(std::move(work)), operation_(std::move(operation)), self_(self), device_(device),
        deadline_(Deadline::after(timeout)), staged_(std::move(staged)), host_(std::move(host)),
        group_(std::move(group)), failed_(std::move(failed)) {}

  void wait() override {
    if (done_) return;
    const c10::cuda::CUDAGuard guard(device_);
    try {
      work_->wait();  // the current stream now waits for NCCL's; the thread does not block here
    } catch (const std::exception& e) {
      fail(describeNcclFailure(operation_, self_, device_, "failed: " + ncclMessageOf(e)));
    }
    // Completion on the GPU, against the deadline: a short spin, then short sleeps.
    const auto spinUntil = Deadline::Clock::now() + std::chrono::milliseconds(2);
    while (!work_->isCompleted()) {
      if (deadline_.passed()) {
        group_->abort();
        fail(describeNcclFailure(operation_, self_, device_,
                             "did not complete within " + deadline_.describe() + kLateRankUnknown));
      }
      if (Deadline::Clock::now() < spinUntil) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (const std::exception_ptr error = work_->exception()) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        fail(describeNcclFailure(operation_, self_, device_, "failed: " + ncclMessageOf(e)));
      }
    }
    if (host_.defined()) host_.copy_(staged_);
    done_ = true;
  }

  bool isCompleted() override { return done_ || (!host_.defined() && work_->isCompleted()); }

 private:
  [[noreturn]] void fail(const std::string& message) {
    failed_->store(true);
    throw CommError(message);
  }

  c10::intrusive_ptr<c10d::Work> work_;
  std::string operation_;
  int self_;
  c10::Device device_;
  Deadline deadline_;
  at::Tensor staged_;  // what NCCL works on
  at::Tensor host_;    // the caller's CPU tensor the result goes back to; undefined when not staged
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
  std::shared_ptr<std::atomic<bool>> failed_;
  bool done_ = false;
};

}  // namespace

struct NcclCommunicator::Impl {
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group;
  std::chrono::milliseconds timeout{};
  std::shared_ptr<std::atomic<bool>> failed = std::make_shared<std::atomic<bool>>(false);

  // `staged` is what NCCL works on; `host` the caller's CPU tensor it stands for (undefined when the
  // caller's tensor is on the device).
  template <typename IssueFn>
  WorkPtr issue(IssueFn&& issueFn, const std::string& operation, int self, const c10::Device& device,
                at::Tensor staged, at::Tensor host) const {
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = issueFn();
    } catch (const std::exception& e) {
      failed->store(true);
      throw CommError(describeNcclFailure(operation, self, device, "failed: " + ncclMessageOf(e)));
    }
    return std::make_shared<NcclWork>(std::move(work), operation, self, device, timeout, std::move(staged),
                                      std::move(host), group, failed);
  }
};

NcclCommunicator::NcclCommunicator(Store store, int rank, int size, const NcclOptions& options)
    : impl_(std::make_unique<Impl>()), rank_(rank), size_(size),
      device_(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(options.deviceIndex)) {
  impl_->timeout = options.timeout;
  auto ncclOptions = c10d::ProcessGroupNCCL::Options::create();
  // c10d's own watchdog aborts a collective after its timeout; dtbench's deadline (the same
  // --timeout) comes first, so that the error names the operation and the rank.
  ncclOptions->timeout = options.timeout + std::chrono::seconds(30);
  const c10::cuda::CUDAGuard guard(device_);
  try {
    impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store.prefixed("nccl").c10dStore(), rank, size,
                                                               ncclOptions);
    impl_->group->setBoundDeviceId(device_);
    impl_->group->eagerConnectSingleDevice(device_);  // every rank's communicator exists from here on
  } catch (const std::exception& e) {
    throw std::runtime_error("nccl rendezvous of rank " + std::to_string(rank) + " of " + std::to_string(size) +
                             " on " + device_.str() + " failed: " + ncclMessageOf(e));
  }
}

// Note [Ending a NCCL group]
// shutdown() waits for the group's outstanding work and destroys its communicators, which every
// rank does at the end of a run. After a failure the group was aborted (NcclWork::wait): a second
// abort is harmless, and nothing waits for a peer that may be gone.
NcclCommunicator::~NcclCommunicator() {
  if (!impl_ || !impl_->group) return;
  try {
    if (impl_->failed->load()) impl_->group->abort();
    else impl_->group->shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nccl: ending the group of rank %d: %s\n", rank_, ncclMessageOf(e).c_str());
  }
}

WorkPtr NcclCommunicator::send(const at::Tensor&, int, int) {
  throw std::invalid_argument(
      "nccl: send and recv (the point-to-point topologies) are not supported on this backend; use --topology "
      "native with --backend nccl, or --backend gloo or mpi for the point-to-point topologies");
}

WorkPtr NcclCommunicator::recv(const at::Tensor& tensor, int peer, int tag) { return send(tensor, peer, tag); }

WorkPtr NcclCommunicator::allreduce(const at::Tensor& tensor, ReduceOp op) {
  elementTypeOf(tensor.scalar_type());  // throws naming the supported types
  const c10::cuda::CUDAGuard guard(device_);
  at::Tensor staged = onDevice(tensor, device_, "allreduce");
  if (tensor.numel() == 0) return completedWork();
  std::vector<at::Tensor> tensors{staged};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  options.timeout = impl_->timeout;
  const at::Tensor host = staged.is_same(tensor) ? at::Tensor() : tensor;
  WorkPtr sum = impl_->issue([&] { return impl_->group->allreduce(tensors, options); }, "allreduce", rank_, device_,
                             staged, host);
  return op == ReduceOp::kAverage ? averageAfter(std::move(sum), tensor, size_) : sum;
}

WorkPtr NcclCommunicator::broadcast(const at::Tensor& tensor, int root) {
  const c10::cuda::CUDAGuard guard(device_);
  at::Tensor staged = onDevice(tensor, device_, "broadcast");
  if (tensor.numel() == 0) return completedWork();
  std::vector<at::Tensor> tensors{staged};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  options.timeout = impl_->timeout;
  const at::Tensor host = staged.is_same(tensor) ? at::Tensor() : tensor;
  return impl_->issue([&] { return impl_->group->broadcast(tensors, options); }, "broadcast", rank_, device_, staged,
                      host);
}

WorkPtr NcclCommunicator::allgather(const at::Tensor& output, const at::Tensor& input) {
  if (output.numel() != input.numel() * size_)
    throw std::invalid_argument("allgather: output must have size() * input.numel() elements");
  const c10::cuda::CUDAGuard guard(device_);
  at::Tensor stagedOutput = onDevice(output, device_, "allgather");
  at::Tensor stagedInput = onDevice(input, device_, "allgather");
  if (input.numel() == 0) return completedWork();
  c10d::AllgatherOptions options;
  options.timeout = impl_->timeout;
  const at::Tensor host = stagedOutput.is_same(output) ? at::Tensor() : output;
  return impl_->issue([&] { return impl_->group->_allgather_base(stagedOutput, stagedInput, options); }, "allgather",
                      rank_, device_, stagedOutput, host);
}

// One float all-reduced on the device: c10d's own barrier guesses a device for it.
WorkPtr NcclCommunicator::barrier() {
  return allreduce(at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(device_)), ReduceOp::kSum);
}

}  // namespace dtbench::comm
