#pragma once
// BucketedAllreduce: --sync ssgd. Gradients averaged over every rank, the way PyTorch's
// DistributedDataParallel does it, through any backend x topology (comm::TopologyAllreduce).
//
//  - overlap (default): the parameters are split into buckets (trainer/sync/bucket_assignment.h: reverse
//    parameter order, --bucket-mb caps, first bucket 1 MiB). A post-hook on every parameter's
//    gradient accumulator counts the bucket's gradients as backward produces them; the moment a
//    bucket's last gradient is accumulated, the bucket is queued on the CommWorker, which copies
//    its gradients into one flat buffer, all-reduces it, scales by 1/N and copies back. Buckets are
//    queued strictly in bucket-index order on every rank (a ready bucket waits for its
//    predecessors), so every rank issues the same collectives in the same order.
//  - no overlap (--no-overlap): one fused all-reduce of every gradient, queued after backward.
//  - BatchNorm running statistics (every floating-point buffer): unless kept local, broadcast from
//    rank 0 each step, as DDP does. DDP broadcasts at the start of forward; here the broadcast is
//    queued when backward starts (forward has updated the statistics; backward only reads them)
//    and overlaps backward, and afterBackward() writes rank 0's values into this rank's buffers once
//    backward is over (autograd keeps the running statistics for BatchNorm's backward: writing them
//    earlier would corrupt it). Every rank enters the next forward with rank 0's buffers: the
//    values DDP would broadcast.
//    Integer buffers (BatchNorm's num_batches_tracked) advance identically on every rank and are
//    not sent.
//  - The stop flag rides as one extra element at the end of the last bucket's buffer.
//  - --compress: a bucket's buffer is averaged by its BucketCompression (trainer/sync/bucket_compression.h:
//    float32, fp16, bf16 or PowerSGD), which times its encoding and decoding (SyncResult::compressS).
//
// Every parameter must receive a gradient in every backward (the zoo's models do): a parameter
// that did not is reported by name, as DDP's find_unused_parameters error does. Gradients must be
// float32, float16 or bfloat16 (the topologies' types); gradients stay in .grad (copied in and out
// of the bucket buffers), so zero_grad may drop or zero them.
//
// Gradients on a GPU: the worker's copies and collectives run on a side stream of that GPU, each
// task after an event recorded when it was queued (a bucket's: the moment its last gradient was
// accumulated), and the training thread's stream waits for the side stream once, in afterBackward(),
// before anything reads the averaged gradients or the broadcast buffers (trainer/sync/side_stream.h).
// Buckets that live on the CPU (gloo, mpi) are then in pinned memory: the gradients are copied in
// asynchronously, the worker waits for the side stream once per bucket before the collective, and
// the averages are copied back asynchronously.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "comm/communicator.h"
#include "comm/topology_allreduce.h"
#include "compat/autograd_compat.h"
#include "trainer/sync/bucket_assignment.h"
#include "trainer/sync/bucket_compression.h"
#include "trainer/sync/comm_worker.h"
#include "trainer/sync/gradient_sync.h"
#include "trainer/sync/side_stream.h"

namespace torch::autograd {
struct Node;
}

namespace dtbench::trainer {

struct BucketedAllreduceOptions {
  bool overlap = true;
  BucketLimits limits;
  bool broadcastBuffers = true;
  CompressionOptions compression;  // --compress (trainer/sync/bucket_compression.h)
};

class BucketedAllreduce final : public GradientSync {
 public:
  // The module, communicator, algorithm and worker outlive this object.
  BucketedAllreduce(torch::nn::Module& model, comm::Communicator& communicator, comm::TopologyAllreduce& allreduce,
                    CommWorker& worker, const BucketedAllreduceOptions& options);
  ~BucketedAllreduce() override;

  void beforeBackward(int64_t globalStep, bool stopRequested) override;
  SyncResult afterBackward() override;
  std::string saveState() const override;
  void loadState(const std::string& bytes, const std::string& source) override;

  // The buckets in launch order, as indices into model.parameters() (for tests and config.json).
  const std::vector<std::vector<size_t>>& buckets() const { return buckets_; }
  // Elements of each bucket's all-reduced buffer in launch order (the last one includes the stop
  // flag) and their element type names (comm/element_type.h): the bytes a step all-reduces, as
  // config.json records them for dtbench report.
  std::vector<int64_t> bucketElements() const;
  std::vector<std::string> bucketTypes() const;
  // What one step of each bucket all-reduces under --compress (with none: the buffer itself).
  std::vector<std::vector<BucketCollective>> bucketCollectives() const;

 private:
  struct Bucket {
    std::vector<size_t> parameters;  // indices into parameters_, in bucket order
    std::vector<int64_t> offsets;    // element offset of each parameter in `flat`
    at::Tensor flat;                 // the gradients, plus the stop flag in the last bucket
    int pending = 0;                 // gradients still to come in this backward
  };

  void gradientReady(size_t parameter);
  void launch(size_t bucket);
  void reduceBucket(size_t index, bool carriesFlag);
  void broadcastBuffers();  // worker thread, during backward: buffers are only read
  // Queues `task` on the worker; with gradients on a GPU, it runs on side_, after the work the
  // calling thread has queued so far on its current stream.
  void submit(std::string name, std::function<void()> task);

  comm::Communicator& communicator_;
  comm::TopologyAllreduce& allreduce_;
  CommWorker& worker_;
  BucketedAllreduceOptions options_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> parameters_;
  std::vector<at::Tensor> buffers_;  // floating-point buffers, broadcast from rank 0
  at::Tensor bufferFlat_;
  std::vector<std::vector<size_t>> buckets_;
  std::vector<Bucket> state_;
  std::vector<size_t> bucketOf_;
  std::vector<char> ready_;  // per parameter: its gradient arrived in this backward
  size_t nextLaunch_ = 0;
  int64_t globalStep_ = 0;
  bool armed_ = false;
  float stopFlag_ = 0;
  bool stopAgreed_ = false;
  std::optional<SideStream> side_;  // gradients on a GPU: the worker's stream (trainer/sync/side_stream.h)
  std::unique_ptr<BucketCompression> compression_;
  std::optional<compat::AccumulatorHooks> hooks_;  // with overlap; last: removed before what they call
};

}  // namespace dtbench::trainer
