#pragma once
// --cuda-graph: whether a run's whole training step can be captured in one CUDA graph and replayed
// (copy of the batch into static inputs, forward, loss, backward, the NCCL all-reduce of every
// bucket, the optimizer with its learning rate in a tensor). A capture records the work queued on
// one stream by one thread, with no host synchronization and no host-side decision inside; a step
// that needs any of these cannot be captured:
//
//   --device cpu              there is no CUDA work to capture
//   a LibTorch without CUDA   no CUDA graphs
//   --mode dp                 DataParallel replicates the model and scatters the batch on every call
//   --backend gloo or mpi     (several ranks) their collectives run on the host: Gloo and MPI calls on
//                             the communication thread, which no CUDA graph records
//   --sync pairavg            each step's partner comes from a seeded draw on the host
//   --topology other than native  dtbench's own schedules send point to point from the host
//   --amp fp16                the loss scaler reads the inf/NaN check on the host and skips steps
//   --phase-timing sync       waits for the device inside the step
//   --optimizer adam, rmsprop their _foreach_ kernels take the learning rate as a host number, which a
//                             capture would freeze; the fused SGD reads it from a device tensor
//   several ranks (nccl)      recording NCCL's all-reduce of the buckets, issued from the capturing
//                             thread instead of the communication thread, is not built yet
//
// Where none of these holds (one rank, --device cuda, sgd), trainer/step/graph/graphed_train_step.h captures the
// step after its warm-up and replays it.

#include <string>

#include "trainer/config.h"

namespace dtbench::trainer {

// "" when `config`'s step could be captured; otherwise the reason, naming the flag to change.
std::string cudaGraphRefusal(const RunConfig& config);

}  // namespace dtbench::trainer
