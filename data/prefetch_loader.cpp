#include "data/prefetch_loader.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include <torch/cuda.h>

#include "compat/torch_compat.h"

namespace dtbench::data {

namespace {

int64_t checkedWorkers(const PrefetchOptions& options) {
  if (options.workers < 0) {
    throw std::invalid_argument("--workers must be >= 0 (0 = build batches on the training thread), got " +
                                std::to_string(options.workers));
  }
  if (options.depth < 0) {
    throw std::invalid_argument("the prefetch depth must be >= 0 (0 = 2 x workers), got " +
                                std::to_string(options.depth));
  }
  return options.workers;
}

}  // namespace

PrefetchLoader::PrefetchLoader(const Dataset& dataset, const LoaderOptions& loaderOptions,
                               const PrefetchOptions& options)
    : PrefetchLoader(BatchFunction(), 0, options) {
  loader_ = std::make_unique<Loader>(dataset, loaderOptions);
  const Loader* loader = loader_.get();
  makeBatch_ = [loader](int64_t epoch, int64_t b) { return loader->batch(epoch, b); };
  batches_ = loader_->batchesPerEpoch();
  start();
}

PrefetchLoader::PrefetchLoader(BatchFunction makeBatch, int64_t batchesPerEpoch,
                               const PrefetchOptions& options)
    : makeBatch_(std::move(makeBatch)),
      batches_(batchesPerEpoch),
      workerCount_(checkedWorkers(options)),
      pin_(options.pinMemory && torch::cuda::is_available()) {
  if (batchesPerEpoch < 0) {
    throw std::invalid_argument("PrefetchLoader: batchesPerEpoch must be >= 0, got " +
                                std::to_string(batchesPerEpoch));
  }
  const int64_t depth = options.depth > 0 ? options.depth : 2 * workerCount_;
  slots_.resize(static_cast<size_t>(workerCount_ > 0 ? std::max<int64_t>(depth, 1) : 0));
  if (makeBatch_) start();  // else the dataset constructor starts the workers once it has a Loader
}

void PrefetchLoader::start() {
  threads_.reserve(static_cast<size_t>(workerCount_));
  for (int64_t t = 0; t < workerCount_; ++t) threads_.emplace_back([this] { work(); });
}

PrefetchLoader::~PrefetchLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  freed_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void PrefetchLoader::startEpoch(int64_t epoch) {
  if (epoch < 0) {
    throw std::invalid_argument("PrefetchLoader: the epoch must be >= 0, got " + std::to_string(epoch));
  }
  std::vector<Slot> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    epoch_ = epoch;
    ++generation_;
    nextClaim_ = 0;
    nextOut_ = 0;
    failed_ = nullptr;
    active_ = true;
    dropped.swap(slots_);  // the old batches are freed outside the lock
    slots_.resize(dropped.size());
  }
  freed_.notify_all();
}

Batch PrefetchLoader::build(int64_t epoch, int64_t batchIndex) const {
  Batch batch = makeBatch_(epoch, batchIndex);
  if (pin_ && batch.images.is_cpu()) {
    batch.images = batch.images.pin_memory();
    batch.labels = batch.labels.pin_memory();
  }
  return batch;
}

void PrefetchLoader::work() {
  compat::useOneIntraOpThread();  // Note [One intra-op thread off the training thread] (compat/)
#ifdef __linux__
  // Note [Workers never preempt the training thread]
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);  // best effort: no privilege needed
#endif
  std::unique_lock<std::mutex> lock(mutex_);
  const auto depth = static_cast<int64_t>(slots_.size());
  while (true) {
    freed_.wait(lock, [&] {
      return stop_ || (active_ && nextClaim_ < batches_ && nextClaim_ < nextOut_ + depth);
    });
    if (stop_) return;
    const int64_t index = nextClaim_++;
    const int64_t epoch = epoch_;
    const uint64_t generation = generation_;
    lock.unlock();
    Slot result;
    result.index = index;
    try {
      result.batch = build(epoch, index);
    } catch (...) {
      result.error = std::current_exception();
    }
    lock.lock();
    if (generation != generation_) {
      lock.unlock();  // an abandoned epoch's batch: drop it (outside the lock)
      result = Slot();
      lock.lock();
      continue;
    }
    slots_[static_cast<size_t>(index % depth)] = std::move(result);
    filled_.notify_one();  // only next() waits on filled_
  }
}

std::optional<Batch> PrefetchLoader::next() {
  if (workerCount_ == 0) {
    if (failed_) std::rethrow_exception(failed_);
    if (nextOut_ >= batches_) return std::nullopt;
    try {
      return build(epoch_, nextOut_++);
    } catch (...) {
      failed_ = std::current_exception();
      throw;
    }
  }
  Slot taken;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (failed_) std::rethrow_exception(failed_);
    if (nextOut_ >= batches_) return std::nullopt;
    if (!active_) {
      active_ = true;  // epoch 0 without startEpoch
      freed_.notify_all();
    }
    const int64_t want = nextOut_;
    Slot& slot = slots_[static_cast<size_t>(want % static_cast<int64_t>(slots_.size()))];
    filled_.wait(lock, [&] { return slot.index == want; });
    taken = std::move(slot);
    slot = Slot();
    ++nextOut_;
    if (taken.error) failed_ = taken.error;
  }
  freed_.notify_one();  // one slot was freed: one worker has work
  if (taken.error) std::rethrow_exception(taken.error);
  return std::move(taken.batch);
}

}  // namespace dtbench::data
