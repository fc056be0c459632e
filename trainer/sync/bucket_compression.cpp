#include "trainer/sync/bucket_compression.h"

#include <chrono>
#include <stdexcept>
#include <utility>

#include <ATen/ops/empty.h>

#include "comm/tensor_element_type.h"
#include "comm/traffic/message_log.h"
#include "trainer/sync/powersgd.h"

namespace dtbench::trainer {

namespace {

double nowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// --compress none: the float32 all-reduce BucketedAllreduce has always made.
class NoCompression final : public BucketCompression {
 public:
  NoCompression(comm::Communicator& communicator, comm::TopologyAllreduce& allreduce,
                std::vector<BucketLayout> buckets, std::function<void()> deviceSync)
      : BucketCompression(communicator, allreduce, std::move(buckets), std::move(deviceSync)) {}

  void average(size_t bucket, const at::Tensor& flat, int64_t /*globalStep*/) override {
    averageUncompressed(bucket, flat);
  }

  std::vector<BucketCollective> collectives(size_t bucket) const override {
    const BucketLayout& b = buckets_.at(bucket);
    return {{"gradients", b.gradients + (b.carriesFlag ? 1 : 0), comm::ElementType::kFloat32}};
  }
};

// --compress fp16 / bf16: the bucket cast, divided by the world size, summed in 16 bits, cast back.
class HalfPrecisionCompression final : public BucketCompression {
 public:
  HalfPrecisionCompression(at::ScalarType type, comm::Communicator& communicator, comm::TopologyAllreduce& allreduce,
                           std::vector<BucketLayout> buckets, std::function<void()> deviceSync)
      : BucketCompression(communicator, allreduce, std::move(buckets), std::move(deviceSync)), type_(type) {
    halves_.resize(buckets_.size());
  }

  void average(size_t bucket, const at::Tensor& flat, int64_t /*globalStep*/) override {
    const BucketLayout& b = buckets_.at(bucket);
    at::Tensor& half = halves_.at(bucket);
    if (!half.defined()) half = at::empty({flat.numel()}, flat.options().dtype(type_).pinned_memory(false));
    {
      const CodecTimer timer(*this);
      half.copy_(flat);
      // The flag stays a count of the ranks that asked to stop (small integers are exact in 16 bits).
      half.narrow(0, 0, b.gradients).div_(communicator_.size());
    }
    sum(half);
    const CodecTimer timer(*this);
    flat.copy_(half);
  }

  std::vector<BucketCollective> collectives(size_t bucket) const override {
    const BucketLayout& b = buckets_.at(bucket);
    return {{"gradients", b.gradients + (b.carriesFlag ? 1 : 0), comm::elementTypeOf(type_)}};
  }

 private:
  at::ScalarType type_;
  std::vector<at::Tensor> halves_;  // one buffer per bucket, where the bucket's buffer is (made at its first step)
};

}  // namespace

BucketCompression::BucketCompression(comm::Communicator& communicator, comm::TopologyAllreduce& allreduce,
                                     std::vector<BucketLayout> buckets, std::function<void()> deviceSync)
    : communicator_(communicator),
      allreduce_(allreduce),
      buckets_(std::move(buckets)),
      deviceSync_(deviceSync ? std::move(deviceSync) : [] {}) {}

void BucketCompression::loadState(const std::string& bytes, const std::string& source) {
  if (!bytes.empty())
    throw std::runtime_error(source + " holds gradient-compression state, but this run's --compress keeps none");
}

double BucketCompression::takeCodecSeconds() {
  const double seconds = codecS_;
  codecS_ = 0;
  return seconds;
}

int64_t BucketCompression::takeCollectives() {
  const int64_t issued = collectives_;
  collectives_ = 0;
  return issued;
}

BucketCompression::CodecTimer::CodecTimer(BucketCompression& owner) : owner_(owner), startS_(nowS()) {}

BucketCompression::CodecTimer::~CodecTimer() {
  owner_.deviceSync_();
  owner_.codecS_ += nowS() - startS_;
}

void BucketCompression::sum(const at::Tensor& tensor) {
  if (tensor.numel() == 0) return;
  const comm::MessageCategoryScope category(comm::MessageCategory::kGradients);  // on the worker thread
  allreduce_.allreduce(tensor);
  ++collectives_;
}

void BucketCompression::averageUncompressed(size_t bucket, const at::Tensor& flat) {
  sum(flat);
  flat.narrow(0, 0, buckets_.at(bucket).gradients).div_(communicator_.size());
}

std::unique_ptr<BucketCompression> makeBucketCompression(const CompressionOptions& options,
                                                         comm::Communicator& communicator,
                                                         comm::TopologyAllreduce& allreduce,
                                                         std::vector<BucketLayout> buckets,
                                                         std::function<void()> deviceSync) {
  switch (options.kind) {
    case run::Compression::kNone:
      return std::make_unique<NoCompression>(communicator, allreduce, std::move(buckets), std::move(deviceSync));
    case run::Compression::kFp16:
    case run::Compression::kBf16:
      return std::make_unique<HalfPrecisionCompression>(options.kind == run::Compression::kFp16 ? at::kHalf
                                                                                                : at::kBFloat16,
                                                        communicator, allreduce, std::move(buckets),
                                                        std::move(deviceSync));
    case run::Compression::kPowerSgd:
      return makePowerSgd(options, communicator, allreduce, std::move(buckets), std::move(deviceSync));
  }
  throw std::logic_error("a --compress without its BucketCompression");
}

}  // namespace dtbench::trainer
