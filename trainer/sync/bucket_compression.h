#pragma once
// BucketCompression: how --sync ssgd averages one gradient bucket over the ranks (--compress;
// docs/design.md, "Gradient compression"): the codec of a compression's row (run/compression.h, which
// says what the bucket sends). BucketedAllreduce (trainer/sync/bucketed_allreduce.h) fills a bucket's
// float32 buffer with its gradients (and the stop flag, in the last bucket) and hands it here on the
// communication thread:
//   none       NoCompression: the buffer all-reduced in float32, then the gradients divided by the world size;
//   fp16/bf16  HalfPrecisionCompression: the buffer cast to the 16-bit type and its gradients divided by
//              the world size before the sum (so that the sum cannot overflow, as PyTorch's
//              fp16_compress_hook), all-reduced in that type and cast back;
//   powersgd   PowerSgd: trainer/sync/powersgd.h.
// makeBucketCompression makes the codec through a table keyed by Compression, one line per codec
// (bucket_compression.cpp).
//
// Contract:
//  - average() leaves in flat[0, gradients) the same average on every rank of what the ranks passed in
//    (rounded to 16 bits by fp16 and bf16, approximated by powersgd) and, in a bucket that carries the
//    stop flag, the sum of the ranks' flags in flat[gradients]. Every rank calls it for the same
//    buckets in the same order, with the run's 1-based step.
//  - What is not a collective (casts, divisions, packing, PowerSGD's products and orthogonalization)
//    is timed as encoding and decoding: takeCodecSeconds() returns its sum since the last call
//    (batches.csv's compress_s). `deviceSync` makes the device's queued work part of that time on a
//    GPU (a no-op on the CPU). takeCollectives() returns how many all-reduces it issued since the last
//    call (batches.csv's grad_collectives), counted as they are issued.
//  - collectives(b) lists what one compressed step of bucket b all-reduces, for config.json's record
//    and the report's byte model: the row's run::bucketSends(), the one account predict lays out too.
//    A codec all-reduces exactly that (tests/trainer/sync/test_compression.cpp counts it).
//  - saveState()/loadState() carry what is kept from step to step (PowerSGD's residuals and factors)
//    through a checkpoint, so that --resume continues exactly; "" where nothing is kept.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "comm/communicator.h"
#include "comm/element_type.h"
#include "comm/topology_allreduce.h"
#include "run/compression.h"

namespace dtbench::trainer {

// What a bucket's buffer holds: its gradients as BucketedAllreduce lays them out there (which
// gradients share a bucket is comm::BucketLayout's, comm/bucket_layout.h).
struct BucketContents {
  std::vector<std::vector<int64_t>> shapes;  // each gradient's shape, in bucket order
  std::vector<int64_t> offsets;              // its first element in the buffer
  int64_t gradients = 0;                     // gradient elements; the stop flag follows them when carriesFlag
  bool carriesFlag = false;
  comm::ElementType type = comm::ElementType::kFloat32;  // the buffer's
};

// One all-reduce of a bucket's compressed step (run/compression.h).
using BucketCollective = run::BucketSend;

struct CompressionOptions {
  run::Compression kind = run::Compression::kNone;
  int64_t rank = 2;   // powersgd: R
  int64_t start = 2;  // powersgd: steps 1..start all-reduced uncompressed
  uint64_t seed = 0;  // powersgd: the run's seed, from which every rank draws the same first Q
};

class BucketCompression {
 public:
  virtual ~BucketCompression() = default;

  virtual void average(size_t bucket, const at::Tensor& flat, int64_t globalStep) = 0;
  std::vector<BucketCollective> collectives(size_t bucket) const;
  virtual std::string saveState() const { return {}; }
  // Throws std::runtime_error naming `source` when the bytes are not this compression's state for these buckets.
  virtual void loadState(const std::string& bytes, const std::string& source);

  // Called by the training thread after the worker's drain (which orders them after the worker's writes).
  double takeCodecSeconds();
  int64_t takeCollectives();

 protected:
  BucketCompression(const CompressionOptions& options, comm::Communicator& communicator,
                    comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                    std::function<void()> deviceSync);

  // Times a stretch of encoding or decoding: its seconds are added to the step's compress_s.
  class CodecTimer {
   public:
    explicit CodecTimer(BucketCompression& owner);
    ~CodecTimer();
    CodecTimer(const CodecTimer&) = delete;
    CodecTimer& operator=(const CodecTimer&) = delete;

   private:
    BucketCompression& owner_;
    double startS_;
  };

  // The sum all-reduce of `tensor` (a gradient collective for the traffic record).
  void sum(const at::Tensor& tensor);
  // The uncompressed average: sum in float32, then the gradients divided by the world size.
  void averageUncompressed(size_t bucket, const at::Tensor& flat);

  CompressionOptions options_;
  comm::Communicator& communicator_;
  comm::TopologyAllreduce& allreduce_;
  std::vector<BucketContents> buckets_;
  std::function<void()> deviceSync_;
  double codecS_ = 0;
  int64_t collectives_ = 0;
};

// A codec's factory: one line of the table in bucket_compression.cpp per Compression.
using CodecFactory = std::unique_ptr<BucketCompression> (*)(const CompressionOptions& options,
                                                            comm::Communicator& communicator,
                                                            comm::TopologyAllreduce& allreduce,
                                                            std::vector<BucketContents> buckets,
                                                            std::function<void()> deviceSync);

// The codec of the compression `options.kind` names, for these buckets.
std::unique_ptr<BucketCompression> makeBucketCompression(const CompressionOptions& options,
                                                         comm::Communicator& communicator,
                                                         comm::TopologyAllreduce& allreduce,
                                                         std::vector<BucketContents> buckets,
                                                         std::function<void()> deviceSync);

}  // namespace dtbench::trainer
