#include "data/sampler.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <numeric>
#include <utility>

#include "common/counter_hash.h"
#include "common/split_mix64.h"
#include "data/random_streams.h"

namespace dtbench::data {

std::vector<int64_t> epochPermutation(uint64_t seed, int64_t epoch, int64_t n) {
  if (n < 0) {
    throw std::invalid_argument("epochPermutation: the dataset size must be >= 0, got " +
                                std::to_string(n));
  }
  if (epoch < 0) {
    throw std::invalid_argument("epochPermutation: the epoch must be >= 0, got " +
                                std::to_string(epoch));
  }
  const uint64_t start = common::counterHash(seed, static_cast<uint64_t>(epoch), 0, kStreamShuffle);
  return common::shuffledRange<int64_t>(n, common::SplitMix64(start));
}

int64_t consumedPositions(int64_t start, int64_t steps, int64_t batchSize, int64_t worldSize) {
  if (start < 0 || steps < 0 || batchSize < 1 || worldSize < 1)
    throw std::invalid_argument("consumedPositions: start " + std::to_string(start) + ", steps " +
                                std::to_string(steps) + ", batch " + std::to_string(batchSize) + ", world " +
                                std::to_string(worldSize) + " (want start, steps >= 0; batch, world >= 1)");
  return start + steps * batchSize * worldSize;
}

DistributedSampler::DistributedSampler(int64_t datasetSize, int64_t rank, int64_t worldSize,
                                       uint64_t seed, bool shuffle, bool dropLast, int64_t start)
    : datasetSize_(datasetSize),
      rank_(rank),
      worldSize_(worldSize),
      seed_(seed),
      shuffle_(shuffle),
      start_(start),
      numSamples_(0) {
  if (datasetSize < 0) {
    throw std::invalid_argument("DistributedSampler: the dataset size must be >= 0, got " +
                                std::to_string(datasetSize));
  }
  if (worldSize < 1) {
    throw std::invalid_argument("DistributedSampler: the world size must be >= 1, got " +
                                std::to_string(worldSize));
  }
  if (rank < 0 || rank >= worldSize) {
    throw std::invalid_argument("DistributedSampler: the rank must be in [0, " +
                                std::to_string(worldSize - 1) + "] for a world of " +
                                std::to_string(worldSize) + ", got " + std::to_string(rank));
  }
  if (start < 0 || start > datasetSize) {
    throw std::invalid_argument("DistributedSampler: the consumed positions must be in [0, " +
                                std::to_string(datasetSize) + "], got " + std::to_string(start));
  }
  const int64_t rest = datasetSize - start;
  numSamples_ = dropLast ? rest / worldSize : (rest + worldSize - 1) / worldSize;
}

std::vector<int64_t> DistributedSampler::indices(int64_t epoch) const {
  std::vector<int64_t> list;
  if (shuffle_) {
    list = epochPermutation(seed_, epoch, datasetSize_);
  } else {
    list.resize(static_cast<size_t>(datasetSize_));
    std::iota(list.begin(), list.end(), int64_t{0});
  }
  std::vector<int64_t> mine(static_cast<size_t>(numSamples_));
  for (int64_t k = 0; k < numSamples_; ++k) {
    // Position in the padded (wrapped) or truncated list; with dropLast it is below datasetSize_.
    const int64_t position = start_ + rank_ + k * worldSize_;
    mine[static_cast<size_t>(k)] = list[static_cast<size_t>(position % datasetSize_)];
  }
  return mine;
}

}  // namespace dtbench::data
