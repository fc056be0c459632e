#include "trainer/sync/bucket_compression.h"

#include <chrono>
#include <map>
#include <stdexcept>
#include <utility>

#include <ATen/ops/empty.h>

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
  NoCompression(const CompressionOptions& options, comm::Communicator& communicator,
                comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                std::function<void()> deviceSync)
      : BucketCompression(options, communicator, allreduce, std::move(buckets), std::move(deviceSync)) {}

  void average(size_t bucket, const at::Tensor& flat, int64_t /*globalStep*/) override {
    averageUncompressed(bucket, flat);
  }
};

// --compress fp16 / bf16: the bucket cast, divided by the world size, summed in 16 bits, cast back.
class HalfPrecisionCompression final : public BucketCompression {
 public:
  HalfPrecisionCompression(at::ScalarType type, const CompressionOptions& options, comm::Communicator& communicator,
                           comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                           std::function<void()> deviceSync)
      : BucketCompression(options, communicator, allreduce, std::move(buckets), std::move(deviceSync)), type_(type) {
    halves_.resize(buckets_.size());
  }

  void average(size_t bucket, const at::Tensor& flat, int64_t /*globalStep*/) override {
    const BucketContents& b = buckets_.at(bucket);
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

 private:
  at::ScalarType type_;
  std::vector<at::Tensor> halves_;  // one buffer per bucket, where the bucket's buffer is (made at its first step)
};

template <typename Codec>
std::unique_ptr<BucketCompression> makeCodec(const CompressionOptions& options, comm::Communicator& communicator,
                                        comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                                        std::function<void()> deviceSync) {
  return std::make_unique<Codec>(options, communicator, allreduce, std::move(buckets), std::move(deviceSync));
}

template <at::ScalarType kType>
std::unique_ptr<BucketCompression> makeHalfCodec(const CompressionOptions& options, comm::Communicator& communicator,
                                            comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                                            std::function<void()> deviceSync) {
  return std::make_unique<HalfPrecisionCompression>(kType, options, communicator, allreduce, std::move(buckets),
                                                    std::move(deviceSync));
}

// Each compression's codec (its row's `codec`), one line each.
const std::map<run::Compression, CodecFactory>& codecTable() {
  static const std::map<run::Compression, CodecFactory> table{
      {run::Compression::kNone, makeCodec<NoCompression>},
      {run::Compression::kFp16, makeHalfCodec<at::kHalf>},
      {run::Compression::kBf16, makeHalfCodec<at::kBFloat16>},
      {run::Compression::kPowerSgd, makePowerSgd},
  };
  return table;
}

}  // namespace

BucketCompression::BucketCompression(const CompressionOptions& options, comm::Communicator& communicator,
                                     comm::TopologyAllreduce& allreduce, std::vector<BucketContents> buckets,
                                     std::function<void()> deviceSync)
    : options_(options),
      communicator_(communicator),
      allreduce_(allreduce),
      buckets_(std::move(buckets)),
      deviceSync_(deviceSync ? std::move(deviceSync) : [] {}) {}

std::vector<BucketCollective> BucketCompression::collectives(size_t bucket) const {
  const BucketContents& b = buckets_.at(bucket);
  run::BucketToSend send;
  send.shapes = b.shapes;
  send.elements = b.gradients + (b.carriesFlag ? 1 : 0);
  send.carriesFlag = b.carriesFlag;
  send.type = b.type;
  return run::bucketSends(options_.kind, send, options_.rank);
}

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
                                                         std::vector<BucketContents> buckets,
                                                         std::function<void()> deviceSync) {
  const auto it = codecTable().find(options.kind);
  if (it == codecTable().end())
    throw std::logic_error(std::string("--compress ") + run::compressionRow(options.kind).name + " has no codec (" +
                           run::compressionRow(options.kind).codec + ") in trainer/sync/bucket_compression.cpp");
  return it->second(options, communicator, allreduce, std::move(buckets), std::move(deviceSync));
}

}  // namespace dtbench::trainer
