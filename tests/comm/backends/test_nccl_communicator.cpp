// The nccl backend at world 1 on this machine's GPU (label gpu: skipped where no GPU is visible, and
// built only with a CUDA LibTorch). One rank's collectives are identities, which is what can be
// checked on one GPU: NCCL refuses two ranks on one device. What runs: every collective on tensors
// on the GPU and on CPU tensors staged through it, every element type all-reduce takes, the average,
// the Work contract (wait() after completion, isCompleted()), and the refusals.

#include "catch_torch.h"

#include <memory>
#include <stdexcept>

#include "comm/backends/make_communicator.h"
#include "comm/communicator.h"
#include "gpu_skip.h"

namespace comm = dtbench::comm;

namespace {

std::unique_ptr<comm::Communicator> ncclAlone() {
  comm::BackendOptions options;
  options.backend = comm::Backend::kNccl;
  options.timeoutS = 60;
  return comm::makeCommunicator(options);
}

}  // namespace

TEST_CASE("nccl at world 1: every collective on the GPU and staged from the CPU", "[gpu][nccl]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const auto nccl = ncclAlone();
  REQUIRE(nccl->backend() == comm::Backend::kNccl);
  REQUIRE(nccl->size() == 1);
  REQUIRE(nccl->device().is_cuda());
  const at::TensorOptions gpu = at::TensorOptions().device(nccl->device());

  for (const auto type : {at::kFloat, at::kHalf, at::kBFloat16}) {
    INFO(c10::toString(type));
    const at::Tensor expected = at::arange(1000, at::kFloat).remainder(7).to(type);
    at::Tensor onGpu = expected.to(gpu);
    comm::WorkPtr work = nccl->allreduce(onGpu, comm::ReduceOp::kSum);
    work->wait();
    CHECK(work->isCompleted());
    work->wait();  // a second wait is a no-op
    CHECK(at::equal(onGpu.cpu(), expected));
    at::Tensor onCpu = expected.clone();  // staged through the GPU and back
    nccl->allreduce(onCpu, comm::ReduceOp::kAverage)->wait();
    CHECK(onCpu.device().is_cpu());
    CHECK(at::equal(onCpu, expected));
  }

  at::Tensor broadcast = at::full({5}, 3.0, gpu.dtype(at::kFloat));
  nccl->broadcast(broadcast, 0)->wait();
  CHECK(at::equal(broadcast.cpu(), at::full({5}, 3.0)));
  const at::Tensor input = at::arange(6, at::kLong);  // any element type moves
  at::Tensor gathered = at::zeros({6}, at::kLong);
  nccl->allgather(gathered, input)->wait();
  CHECK(at::equal(gathered, input));
  nccl->barrier()->wait();
  nccl->allreduce(at::empty({0}, gpu.dtype(at::kFloat)), comm::ReduceOp::kSum)->wait();  // nothing to move
}

TEST_CASE("nccl refuses what it does not run, naming what to use", "[gpu][nccl]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const auto nccl = ncclAlone();
  const at::Tensor t = at::zeros({4}, at::TensorOptions().device(nccl->device()));
  CHECK_THROWS_WITH(nccl->send(t, 0, 0), Catch::Contains("--topology native") && Catch::Contains("gloo or mpi"));
  CHECK_THROWS_WITH(nccl->recv(t, 0, 0), Catch::Contains("send and recv"));
  CHECK_THROWS_WITH(nccl->allreduce(at::zeros({4, 4}).t(), comm::ReduceOp::kSum), Catch::Contains("contiguous"));
  CHECK_THROWS_WITH(nccl->allreduce(at::zeros({4}, at::kLong).to(nccl->device()), comm::ReduceOp::kSum),
                    Catch::Contains("float32"));
}
