#pragma once
// The epoch's sample order and its split across ranks (docs/design.md, "Randomness contract").
//
// epochPermutation(seed, epoch, n) is dtbench's own shuffle: a Fisher-Yates shuffle of 0..n-1
// driven by SplitMix64 seeded from counterHash(seed, epoch, 0, kStreamShuffle). It never calls
// at::randperm, whose stream differs across LibTorch versions and devices, so the order is the
// same on every platform, LibTorch version and world size.
//
// DistributedSampler follows torch.utils.data.DistributedSampler exactly, with
// epochPermutation in place of torch.randperm:
//   numSamples = dropLast ? floor(n / N) : ceil(n / N);  totalSize = numSamples * N
//   list = shuffle ? epochPermutation(seed, epoch, n) : [0, 1, ..., n-1]
//   without dropLast the list is padded to totalSize by wrapping around (list[i mod n]);
//   with dropLast it is truncated to totalSize;
//   rank r takes positions r, r+N, r+2N, ... of the list.
// Worked example: n = 5, N = 2, shuffle = false. Without dropLast: list 0 1 2 3 4 0;
// rank 0 gets 0 2 4, rank 1 gets 1 3 0. With dropLast: list 0 1 2 3; rank 0 gets 0 2,
// rank 1 gets 1 3. Every rank gets the same number of samples, so every rank runs the same
// number of steps and the collectives line up.

#include <cstdint>
#include <vector>

namespace dtbench::data {

// A permutation of 0..n-1, a pure function of (seed, epoch, n). epoch >= 0, n >= 0.
std::vector<int64_t> epochPermutation(uint64_t seed, int64_t epoch, int64_t n);

class DistributedSampler {
 public:
  // datasetSize >= 0, worldSize >= 1, 0 <= rank < worldSize; std::invalid_argument otherwise.
  DistributedSampler(int64_t datasetSize, int64_t rank, int64_t worldSize, uint64_t seed,
                     bool shuffle, bool dropLast);

  // This rank's dataset indices for the epoch, in order; numSamples() of them.
  std::vector<int64_t> indices(int64_t epoch) const;

  int64_t numSamples() const { return numSamples_; }  // per rank
  int64_t totalSize() const { return numSamples_ * worldSize_; }  // over all ranks

 private:
  int64_t datasetSize_;
  int64_t rank_;
  int64_t worldSize_;
  uint64_t seed_;
  bool shuffle_;
  int64_t numSamples_;
};

}  // namespace dtbench::data
