#include "trainer/sync/bucketed_allreduce.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>

#include "comm/element_type.h"
#include "comm/tensor_element_type.h"
#include "comm/traffic/message_log.h"
#include "comm/work.h"
#include "run/settings.h"
#include "trainer/sync/flat_tensors.h"

namespace dtbench::trainer {

namespace {

std::string describeBucket(size_t index, const at::Tensor& flat) {
  char text[64];
  std::snprintf(text, sizeof text, "bucket %zu (%.2f MB)", index, static_cast<double>(flat.nbytes()) / 1e6);
  return text;
}

}  // namespace

BucketedAllreduce::BucketedAllreduce(torch::nn::Module& model, comm::Communicator& communicator,
                                     comm::TopologyAllreduce& allreduce, CommWorker& worker,
                                     const BucketedAllreduceOptions& options)
    : communicator_(communicator), allreduce_(allreduce), worker_(worker), options_(options) {
  for (const auto& item : model.named_parameters()) {
    if (!item.value().requires_grad()) continue;
    names_.push_back(item.key());
    parameters_.push_back(item.value());
  }
  if (options.broadcastBuffers) buffers_ = floatingBuffers(model);
  if (!parameters_.empty()) side_ = SideStream::forDevice(parameters_.front().device());
  // Buckets live where the communicator works without a copy: the CPU (gloo, mpi), or the GPU (nccl);
  // on the CPU, for gradients on a GPU, in pinned memory (copied asynchronously).
  const c10::Device commDevice = communicator.device();
  const bool pinned = side_.has_value() && commDevice.is_cpu();
  if (!buffers_.empty())
    bufferFlat_ = at::empty({totalElements(buffers_)}, at::TensorOptions(at::kFloat).device(commDevice).pinned_memory(pinned));
  if (options.overlap) {
    buckets_ = assignBuckets(parameters_, options.limits);
  } else {
    std::vector<size_t> all;
    for (size_t i = parameters_.size(); i-- > 0;) all.push_back(i);
    buckets_.push_back(all);
  }
  bucketOf_.assign(parameters_.size(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket bucket;
    bucket.parameters = buckets_[b];
    int64_t offset = 0;
    for (size_t p : bucket.parameters) {
      bucketOf_[p] = b;
      bucket.offsets.push_back(offset);
      offset += parameters_[p].numel();
      if (!options.overlap && parameters_[p].scalar_type() != parameters_[bucket.parameters.front()].scalar_type())
        throw std::invalid_argument("--no-overlap fuses every gradient into one buffer, which needs one element type; "
                                    "this model mixes them: use the bucketed (overlapped) mode");
    }
    const bool last = b + 1 == buckets_.size();
    const at::Tensor& first = parameters_[bucket.parameters.front()];
    bucket.flat = at::zeros({offset + (last ? 1 : 0)}, first.options().device(commDevice).pinned_memory(pinned));
    state_.push_back(std::move(bucket));
  }
  if (run::compressionRow(options.compression.kind).compresses)
    for (const Bucket& bucket : state_)
      if (bucket.flat.scalar_type() != at::kFloat)
        throw std::invalid_argument("--compress " + std::string(run::compressionNames().name(options.compression.kind)) +
                                    " compresses float32 gradients, and this model has " +
                                    std::string(c10::toString(bucket.flat.scalar_type())) + " ones: use --compress none");
  std::vector<BucketContents> layouts;
  for (size_t b = 0; b < state_.size(); ++b) {
    BucketContents layout;
    for (size_t p : state_[b].parameters) layout.shapes.push_back(parameters_[p].sizes().vec());
    layout.offsets = state_[b].offsets;
    layout.carriesFlag = b + 1 == state_.size();
    layout.gradients = state_[b].flat.numel() - (layout.carriesFlag ? 1 : 0);
    layout.type = comm::elementTypeOf(state_[b].flat.scalar_type());
    layouts.push_back(std::move(layout));
  }
  compression_ = makeBucketCompression(options.compression, communicator, allreduce, std::move(layouts), [this] {
    if (side_) side_->synchronize();
  });
  if (options.overlap) hooks_.emplace(parameters_, [this](size_t i) { gradientReady(i); });
}

std::vector<int64_t> BucketedAllreduce::bucketElements() const {
  std::vector<int64_t> elements;
  for (const Bucket& bucket : state_) elements.push_back(bucket.flat.numel());
  return elements;
}

std::vector<std::string> BucketedAllreduce::bucketTypes() const {
  std::vector<std::string> types;
  for (const Bucket& bucket : state_) types.push_back(comm::name(comm::elementTypeOf(bucket.flat.scalar_type())));
  return types;
}

std::vector<std::vector<BucketCollective>> BucketedAllreduce::bucketCollectives() const {
  std::vector<std::vector<BucketCollective>> collectives;
  for (size_t b = 0; b < state_.size(); ++b) collectives.push_back(compression_->collectives(b));
  return collectives;
}

std::string BucketedAllreduce::saveState() const { return compression_->saveState(); }

void BucketedAllreduce::loadState(const std::string& bytes, const std::string& source) {
  compression_->loadState(bytes, source);
}

BucketedAllreduce::~BucketedAllreduce() = default;

void BucketedAllreduce::beforeBackward(int64_t globalStep, bool stopRequested) {
  globalStep_ = globalStep;
  stopFlag_ = stopRequested ? 1.0f : 0.0f;
  stopAgreed_ = false;
  for (Bucket& b : state_) b.pending = static_cast<int>(b.parameters.size());
  ready_.assign(parameters_.size(), 0);
  nextLaunch_ = 0;
  armed_ = true;
  if (!buffers_.empty()) submit("buffers", [this] { broadcastBuffers(); });
}

void BucketedAllreduce::submit(std::string name, std::function<void()> task) {
  if (!side_) {
    worker_.submit(std::move(name), std::move(task));
    return;
  }
  std::shared_ptr<c10::Event> after = side_->markCurrent();
  worker_.submit(std::move(name), [this, after = std::move(after), task = std::move(task)] {
    const SideStream::Scope onSide(*side_, *after);
    task();
    side_->markDone();
  });
}

void BucketedAllreduce::gradientReady(size_t parameter) {
  if (!armed_ || ready_[parameter]) return;  // outside a training step, or a reused parameter
  ready_[parameter] = 1;
  Bucket& bucket = state_[bucketOf_[parameter]];
  --bucket.pending;
  while (nextLaunch_ < state_.size() && state_[nextLaunch_].pending == 0) launch(nextLaunch_++);
}

void BucketedAllreduce::launch(size_t index) {
  Bucket& bucket = state_[index];
  const bool last = index + 1 == state_.size();
  submit(describeBucket(index, bucket.flat), [this, index, last] { reduceBucket(index, last); });
}

void BucketedAllreduce::reduceBucket(size_t index, bool carriesFlag) {
  Bucket& bucket = state_[index];
  at::NoGradGuard noGrad;
  // On the side stream (gradients on a GPU), the copies are queued without waiting; a bucket on the
  // host is read only once they are done.
  const bool async = side_.has_value();
  for (size_t k = 0; k < bucket.parameters.size(); ++k) {
    const at::Tensor& p = parameters_[bucket.parameters[k]];
    at::Tensor slot = bucket.flat.narrow(0, bucket.offsets[k], p.numel());
    const at::Tensor& grad = p.grad();
    if (grad.defined()) slot.copy_(grad.reshape({-1}), async);
    else slot.zero_();
  }
  if (async && bucket.flat.is_cpu()) side_->synchronize();
  const int64_t gradients = bucket.flat.numel() - (carriesFlag ? 1 : 0);
  if (carriesFlag) bucket.flat[gradients].fill_(stopFlag_);
  compression_->average(index, bucket.flat, globalStep_);  // the gradients averaged, the flags summed
  if (carriesFlag) stopAgreed_ = bucket.flat[gradients].item<float>() > 0.5f;
  for (size_t k = 0; k < bucket.parameters.size(); ++k) {
    at::Tensor p = parameters_[bucket.parameters[k]];
    at::Tensor slot = bucket.flat.narrow(0, bucket.offsets[k], p.numel()).view(p.sizes());
    if (p.grad().defined()) p.mutable_grad().copy_(slot, async);
    else p.mutable_grad() = slot.to(p.device(), /*non_blocking=*/false, /*copy=*/true);
  }
}

// On the worker, during backward: buffers are only read (autograd keeps BatchNorm's running
// statistics for its backward, so they must not change until backward is over).
void BucketedAllreduce::broadcastBuffers() {
  packInto(buffers_, bufferFlat_);
  const comm::MessageCategoryScope category(comm::MessageCategory::kBuffers);
  communicator_.broadcast(bufferFlat_, 0)->wait();
}

SyncResult BucketedAllreduce::afterBackward() {
  armed_ = false;
  if (!options_.overlap) {
    for (Bucket& b : state_) b.pending = 0;
    launch(0);
  } else if (nextLaunch_ < state_.size()) {
    // Every rank would wait for this bucket forever: report what is missing instead.
    std::string missing;
    for (size_t p : state_[nextLaunch_].parameters)
      if (!ready_[p]) {
        missing = names_[p];
        break;
      }
    worker_.drain();  // the buckets already queued complete on every rank
    throw std::runtime_error("parameter '" + missing + "' (bucket " + std::to_string(nextLaunch_) +
                             ") received no gradient in backward; every parameter must take part in the loss");
  }
  SyncResult result;
  result.intervals = worker_.drain();
  result.compressS = compression_->takeCodecSeconds();
  result.gradCollectives = compression_->takeCollectives();
  if (side_) side_->joinCurrent();  // the averaged gradients and the broadcast buffers are written there
  result.stopAgreed = stopAgreed_;
  // Rank 0's statistics, written only now that backward no longer needs this rank's.
  if (!buffers_.empty()) unpackFrom(bufferFlat_, buffers_);
  return result;
}

}  // namespace dtbench::trainer
