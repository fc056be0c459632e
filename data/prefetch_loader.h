#pragma once
// PrefetchLoader: the Loader's batches, built ahead of time by worker threads (`--workers N`).
//
// Contract: the same interface as Loader (startEpoch, next, batchesPerEpoch) and the same
// batches, bit for bit, whatever the worker count: batch b of an epoch is always
// Loader::batch(epoch, b), a pure function, so workers may build batches in any order on any
// thread; next() hands them out strictly in order 0, 1, 2, ... With workers = 0, next() builds
// the batch itself on the calling thread (no threads at all).
//
// Note [Prefetch slots]
// A ring of `depth` slots (default 2 x workers) bounds the memory: a worker claims the next
// unclaimed batch index i only while i < (next index to hand out) + depth, builds it without the
// lock, and stores it in slot i mod depth, which is then free because batch i - depth was
// handed out already. next() waits until its slot holds its index. startEpoch bumps a
// generation counter: batches of an abandoned epoch (e.g. cut by --max-steps) that are still
// being built are dropped when they arrive. Worked example, depth 4, 2 workers: the workers build
// 0 and 1, then 2 and 3, then wait; next() takes 0, which frees slot 0 for batch 4; and so on.
// Prefetching of an epoch starts at startEpoch (or at the first next(), for epoch 0).
//
// Note [Workers never preempt the training thread]
// next() wakes one worker for the slot it freed. On Linux the scheduler lets a woken thread
// preempt the one that woke it, so on a busy machine the training thread would sit out the
// worker's whole batch (on 2 cores: ~0.8 ms of data_s in a third of LeNet's steps, with the batch
// ready all along). Workers therefore run under SCHED_BATCH, which removes wakeup preemption but
// keeps their normal share of the CPU; they are ahead by `depth` batches anyway. And each worker
// runs its ATen ops with one intra-op thread (compat/torch_compat.h, Note [One intra-op thread off
// the training thread]): with the training thread's count, every worker would bring an OpenMP team
// of its own, and the oversubscribed cores would slow every parallel op of the step.
//
// Errors: an exception thrown while building batch b is stored in b's slot and rethrown by the
// next() that reaches b, with its own type and message, after batches 0..b-1 were handed out;
// next() keeps rethrowing it until the next startEpoch. The destructor stops and joins the
// workers (waiting for batches being built to finish).
//
// Pinned memory: with pinMemory and a visible CUDA device (torch::cuda::is_available(), checked
// at run time), workers copy each CPU batch into page-locked memory, so that the trainer's
// non-blocking host-to-device copy really overlaps. Without a CUDA device pinMemory does nothing.

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "data/dataset.h"
#include "data/loader.h"

namespace dtbench::data {

struct PrefetchOptions {
  int64_t workers = 2;     // threads building batches; 0 = next() builds them itself
  int64_t depth = 0;       // batches built ahead at most; 0 = 2 x workers
  bool pinMemory = false;  // page-locked batches, only when a CUDA device is visible
};

class PrefetchLoader {
 public:
  using BatchFunction = std::function<Batch(int64_t epoch, int64_t batchIndex)>;

  // Builds a Loader over `dataset` (which must outlive this object). std::invalid_argument for
  // bad options, naming the command-line option.
  PrefetchLoader(const Dataset& dataset, const LoaderOptions& loaderOptions,
                 const PrefetchOptions& options);
  // Any pure, thread-safe batch function with `batchesPerEpoch` batches per epoch.
  PrefetchLoader(BatchFunction makeBatch, int64_t batchesPerEpoch, const PrefetchOptions& options);
  ~PrefetchLoader();
  PrefetchLoader(const PrefetchLoader&) = delete;
  PrefetchLoader& operator=(const PrefetchLoader&) = delete;

  void startEpoch(int64_t epoch);
  std::optional<Batch> next();  // nullopt after the epoch's last batch
  int64_t batchesPerEpoch() const { return batches_; }
  int64_t workers() const { return workerCount_; }

 private:
  struct Slot {
    int64_t index = -1;  // the batch this slot holds, -1 when empty
    std::optional<Batch> batch;
    std::exception_ptr error;
  };

  void start();
  void work();
  Batch build(int64_t epoch, int64_t batchIndex) const;

  std::unique_ptr<Loader> loader_;  // when built from a dataset
  BatchFunction makeBatch_;
  int64_t batches_;
  int64_t workerCount_;
  bool pin_;

  std::mutex mutex_;
  std::condition_variable filled_;  // a slot received its batch
  std::condition_variable freed_;   // a slot was emptied, an epoch started, or stop
  std::vector<Slot> slots_;
  int64_t epoch_ = 0;
  uint64_t generation_ = 0;
  bool active_ = false;  // workers may build batches of epoch_
  bool stop_ = false;
  int64_t nextClaim_ = 0;  // next batch index a worker builds
  int64_t nextOut_ = 0;    // next batch index next() returns
  std::exception_ptr failed_;
  std::vector<std::thread> threads_;
};

}  // namespace dtbench::data
