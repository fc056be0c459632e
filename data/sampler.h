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
//
// A resumed run at another world size (trainer/checkpoint/checkpointer.h) continues an epoch from the
// middle: `start` positions of the list are consumed. After k steps at world N and per-rank batch B,
// rank r has taken positions r, r+N, ..., r+(kB-1)N, so the consumed positions are exactly the prefix
// 0 .. kBN-1 (consumedPositions); while an epoch is unfinished that prefix holds no padding (k < the
// epoch's steps, so kB < numSamples and kBN <= (numSamples - 1)N < n). A sampler with `start` deals
// the rest in the same way: over n - start samples, rank r of the new world N' takes positions
// start + r, start + r + N', ... of the list (padded by wrapping around, list[i mod n], or truncated,
// exactly as above), so that the epoch's positions 0 .. start-1 and the new world's shares are each
// position once, and drop-last (or padding) applies once, at the epoch's end.

#include <cstdint>
#include <vector>

namespace dtbench::data {

// A permutation of 0..n-1, a pure function of (seed, epoch, n). epoch >= 0, n >= 0.
std::vector<int64_t> epochPermutation(uint64_t seed, int64_t epoch, int64_t n);

// The positions of an epoch's list that `steps` whole steps of `batchSize` samples per rank at
// `worldSize` ranks consumed after the first `start`: start + steps * batchSize * worldSize. Valid while
// the epoch is unfinished (every step's batch whole); std::invalid_argument for negative counts.
int64_t consumedPositions(int64_t start, int64_t steps, int64_t batchSize, int64_t worldSize);

class DistributedSampler {
 public:
  // datasetSize >= 0, worldSize >= 1, 0 <= rank < worldSize; std::invalid_argument otherwise.
  // `start`: positions of every epoch's list consumed before this sampler's shares (0 <= start <=
  // datasetSize; a resumed run's first epoch at a new world size), see above.
  DistributedSampler(int64_t datasetSize, int64_t rank, int64_t worldSize, uint64_t seed,
                     bool shuffle, bool dropLast, int64_t start = 0);

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
  int64_t start_;
  int64_t numSamples_;
};

}  // namespace dtbench::data
