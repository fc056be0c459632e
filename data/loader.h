#pragma once
// Loader: turns a Dataset into this rank's batches, epoch by epoch.
//
// Contract: batch(epoch, b) is a pure function of (dataset, options, epoch, b): the b-th slice of
// batchSize samples of DistributedSampler(dataset size, rank, worldSize, seed, shuffle = train,
// dropLast).indices(epoch), gathered from the uint8 images with index_select and then, when
// training, augmented with each sample's own sampleAugment(seed, epoch, dataset index) (random
// crop with `padding`, random flip) or, for evaluation, only normalized. next() walks
// batch(epoch, 0), batch(epoch, 1), ... of the epoch chosen by startEpoch (epoch 0 until then),
// so a prefetching loader can build batches in any order, on any thread, and hand out the same
// ones. batch() is safe to call from several threads at once.
//
// Cost: the epoch's index list (a Fisher-Yates shuffle of the dataset, ~3 ms for 50,000
// samples) is computed once per epoch and cached; a batch costs one index_select of B images,
// one augmentBatch and one index_select of the labels.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "data/dataset.h"
#include "data/sampler.h"

namespace dtbench::data {

struct Batch {
  at::Tensor images;             // float32 [B,C,H,W], normalized (and augmented when training)
  at::Tensor labels;             // int64 [B]
  std::vector<int64_t> indices;  // dataset indices of the samples, in batch order
};

struct LoaderOptions {
  int64_t batchSize = 128;
  bool train = true;      // shuffle + augmentation; false: dataset order, normalize only
  bool dropLast = false;  // drop the last incomplete batch (and DistributedSampler dropLast)
  int64_t rank = 0;
  int64_t worldSize = 1;
  uint64_t seed = 0;
  int64_t padding = 4;    // random-crop padding when training
  bool flip = true;       // random horizontal flip when training
  // Positions of every epoch's list consumed before this loader's shares (data/sampler.h): the rest of
  // an epoch a resumed run continues at another world size. 0: whole epochs.
  int64_t start = 0;
};

class Loader {
 public:
  // Keeps a reference to dataset, which must outlive the loader. std::invalid_argument for bad
  // options, naming the command-line option.
  Loader(const Dataset& dataset, LoaderOptions options);

  void startEpoch(int64_t epoch);  // epoch number feeds the shuffle and augmentation hash
  std::optional<Batch> next();     // nullopt after the epoch's last batch
  Batch batch(int64_t epoch, int64_t batchIndex) const;  // the pure function next() uses

  int64_t batchesPerEpoch() const;
  int64_t samplesPerEpoch() const { return sampler_.numSamples(); }  // this rank's share
  const LoaderOptions& options() const { return options_; }

 private:
  struct EpochCache {
    std::mutex mutex;
    int64_t epoch = -1;
    std::shared_ptr<const std::vector<int64_t>> indices;
  };

  std::shared_ptr<const std::vector<int64_t>> epochIndices(int64_t epoch) const;

  const Dataset* dataset_;
  LoaderOptions options_;
  DistributedSampler sampler_;
  std::unique_ptr<EpochCache> cache_;
  int64_t epoch_ = 0;
  int64_t nextBatch_ = 0;
};

}  // namespace dtbench::data
