#include "data/loader.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "data/augment.h"

namespace dtbench::data {

namespace {

const LoaderOptions& validated(const Dataset& dataset, const LoaderOptions& o) {
  auto require = [](bool ok, const std::string& what, int64_t value) {
    if (!ok) {
      throw std::invalid_argument(what + ", got " + std::to_string(value));
    }
  };
  require(o.batchSize >= 1, "--batch-size must be >= 1", o.batchSize);
  require(o.worldSize >= 1, "--world-size must be >= 1", o.worldSize);
  require(o.rank >= 0 && o.rank < o.worldSize,
          "--rank must be in [0, " + std::to_string(o.worldSize - 1) + "] for --world-size " +
              std::to_string(o.worldSize),
          o.rank);
  require(o.padding >= 0, "the random-crop padding must be >= 0", o.padding);
  if (!dataset.images.defined() || dataset.images.dim() != 4 ||
      dataset.images.scalar_type() != at::kByte || !dataset.labels.defined() ||
      dataset.labels.numel() != dataset.size()) {
    throw std::invalid_argument("Loader: dataset '" + dataset.name +
                                "' must hold uint8 images [N, C, H, W] and N int64 labels");
  }
  if (dataset.mean.size() != static_cast<size_t>(dataset.channels()) ||
      dataset.std.size() != static_cast<size_t>(dataset.channels())) {
    throw std::invalid_argument("Loader: dataset '" + dataset.name + "' has " +
                                std::to_string(dataset.channels()) +
                                " channels but its mean/std have " +
                                std::to_string(dataset.mean.size()) + "/" +
                                std::to_string(dataset.std.size()) + " entries");
  }
  return o;
}

}  // namespace

Loader::Loader(const Dataset& dataset, LoaderOptions options)
    : dataset_(&dataset),
      options_(validated(dataset, options)),
      sampler_(dataset.size(), options.rank, options.worldSize, options.seed, options.train,
               options.dropLast, options.start),
      cache_(std::make_unique<EpochCache>()) {}

void Loader::startEpoch(int64_t epoch) {
  if (epoch < 0) {
    throw std::invalid_argument("Loader: the epoch must be >= 0, got " + std::to_string(epoch));
  }
  epoch_ = epoch;
  nextBatch_ = 0;
}

std::optional<Batch> Loader::next() {
  if (nextBatch_ >= batchesPerEpoch()) {
    return std::nullopt;
  }
  return batch(epoch_, nextBatch_++);
}

int64_t Loader::batchesPerEpoch() const {
  const int64_t samples = samplesPerEpoch();
  return options_.dropLast ? samples / options_.batchSize
                           : (samples + options_.batchSize - 1) / options_.batchSize;
}

std::shared_ptr<const std::vector<int64_t>> Loader::epochIndices(int64_t epoch) const {
  std::lock_guard<std::mutex> lock(cache_->mutex);
  if (cache_->epoch != epoch || !cache_->indices) {
    cache_->indices = std::make_shared<const std::vector<int64_t>>(sampler_.indices(epoch));
    cache_->epoch = epoch;
  }
  return cache_->indices;
}

Batch Loader::batch(int64_t epoch, int64_t batchIndex) const {
  if (epoch < 0) {
    throw std::invalid_argument("Loader: the epoch must be >= 0, got " + std::to_string(epoch));
  }
  if (batchIndex < 0 || batchIndex >= batchesPerEpoch()) {
    throw std::invalid_argument("Loader: batch " + std::to_string(batchIndex) +
                                " does not exist; an epoch has " +
                                std::to_string(batchesPerEpoch()) + " batches");
  }
  const auto all = epochIndices(epoch);
  const int64_t begin = batchIndex * options_.batchSize;
  const int64_t end = std::min(begin + options_.batchSize, samplesPerEpoch());

  Batch out;
  out.indices.assign(all->begin() + begin, all->begin() + end);
  const auto count = static_cast<int64_t>(out.indices.size());
  auto index = at::empty({count}, at::kLong);
  std::copy(out.indices.begin(), out.indices.end(), index.data_ptr<int64_t>());
  if (!dataset_->images.is_cpu()) {
    index = index.to(dataset_->images.device());  // --data-on-device: gather where the data are
  }

  const auto images = dataset_->images.index_select(0, index);
  out.labels = dataset_->labels.index_select(0, index);
  if (!options_.train) {
    out.images = normalize(images, dataset_->mean, dataset_->std);
    return out;
  }
  std::vector<SampleAugment> params;
  params.reserve(out.indices.size());
  for (int64_t i : out.indices) {
    params.push_back(sampleAugment(options_.seed, epoch, i, options_.padding, options_.flip));
  }
  out.images = augmentBatch(images, params, options_.padding, dataset_->mean, dataset_->std);
  return out;
}

}  // namespace dtbench::data
