#pragma once
// Communicator: a backend's collectives (PointToPoint plus all-reduce, broadcast, all-gather,
// barrier), chosen at run time by name (comm/backends/backend.h).
//
// Contract (besides PointToPoint's):
//  - Every rank calls the same collectives in the same order with tensors of the same element type
//    and element count; each returns at once with a Work (comm/work.h) whose wait() has the
//    communicator's deadline.
//  - allreduce(t, kSum) leaves the element-wise sum over ranks in t on every rank; kAverage is the
//    sum, then scaled by 1/size(), on every backend alike (Open MPI has no average to ask for).
//    Element types: comm/element_type.h's table for native all-reduce; others throw
//    std::invalid_argument naming the supported ones.
//  - broadcast(t, root) copies root's t into every rank's t.
//  - allgather(output, input): output has size() * input.numel() elements; rank r's input lands at
//    [r * n, (r + 1) * n). Any supported element type (bytes are only moved).
//  - barrier() completes once every rank has called it.
//  - device() is where the communicator works without a copy: the CPU for gloo and mpi, this
//    rank's GPU for nccl. Gradient buckets live there (trainer/sync/bucketed_allreduce.h).
//  - abandon(reason): this rank stops on an error (`reason`, the message the user must see) while the
//    other ranks may be waiting for it inside a collective. A backend whose peers learn of it by
//    themselves once this communicator is destroyed (gloo and nccl: their connections close) does
//    nothing; mpi, whose peers would wait until their deadline and whose MPI_Finalize would wait
//    for them, prints `reason` and aborts the job when it is destroyed.

#include <string>

#include <c10/core/Device.h>

#include "comm/backends/backend.h"
#include "comm/point_to_point.h"
#include "comm/work.h"

namespace dtbench::comm {

enum class ReduceOp { kSum, kAverage };

class Communicator : public PointToPoint {
 public:
  virtual Backend backend() const = 0;
  virtual c10::Device device() const = 0;
  virtual WorkPtr allreduce(const at::Tensor& tensor, ReduceOp op) = 0;
  virtual WorkPtr broadcast(const at::Tensor& tensor, int root) = 0;
  virtual WorkPtr allgather(const at::Tensor& output, const at::Tensor& input) = 0;
  virtual WorkPtr barrier() = 0;
  virtual void abandon(const std::string& /*reason*/) {}
};

// Throws std::invalid_argument unless `tensor` is CPU, contiguous and of an element type that
// `backend`'s own all-reduce takes (comm/backends/backend.h).
void checkNativeAllreduce(const at::Tensor& tensor, Backend backend);

// Wraps a sum all-reduce's Work so that wait() also scales the result by 1/worldSize.
WorkPtr averageAfter(WorkPtr sum, at::Tensor tensor, int worldSize);

}  // namespace dtbench::comm
