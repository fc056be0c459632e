#pragma once
// SplitMix64: a tiny sequential PRNG for loops that need many random words from one counterHash
// value (a Fisher-Yates shuffle, the pixels of a synthetic image).
//
// Contract: the sequence is a pure function of the 64-bit start state: the k-th call to next()
// returns mix64(state + k * kGamma) (k = 1, 2, ...), the same on every platform and compiler.
// Seed it from counterHash so that every sequence belongs to one (seed, epoch, index, stream).
// Not for cryptography; period 2^64.

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "common/counter_hash.h"

namespace dtbench::common {

class SplitMix64 {
 public:
  static constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

  explicit constexpr SplitMix64(uint64_t state) : state_(state) {}

  constexpr uint64_t next() {
    state_ += kGamma;
    return mix64(state_);
  }

  // A uniform integer in [0, bound), bound >= 1, without modulo bias (rejection sampling on the
  // lowest multiple of bound below 2^64; rejects fewer than bound / 2^64 of the draws).
  constexpr uint64_t below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) {
        return r % bound;
      }
    }
  }

 private:
  uint64_t state_;
};

// 0, 1, ..., n-1 shuffled by Fisher-Yates with `rng` (i from n-1 down to 1 swaps with below(i+1)):
// the one shuffle of dtbench, for the epoch's sample order and pair averaging's matching alike.
template <typename Index>
std::vector<Index> shuffledRange(Index n, SplitMix64 rng) {
  std::vector<Index> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), Index{0});
  for (Index i = n - 1; i > 0; --i) {
    const auto j = static_cast<size_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[j]);
  }
  return order;
}

}  // namespace dtbench::common
