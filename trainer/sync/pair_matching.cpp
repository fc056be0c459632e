#include "trainer/sync/pair_matching.h"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "common/counter_hash.h"
#include "common/split_mix64.h"

namespace dtbench::trainer {

std::vector<int> pairPartners(int worldSize, uint64_t seed, int64_t step) {
  if (worldSize < 1) {
    throw std::invalid_argument("pairPartners: the world size must be >= 1, got " +
                                std::to_string(worldSize));
  }
  if (step < 0) {
    throw std::invalid_argument("pairPartners: the step must be >= 0, got " + std::to_string(step));
  }
  const auto n = static_cast<size_t>(worldSize);
  const std::vector<int> order = common::shuffledRange<int>(
      worldSize, common::SplitMix64(common::counterHash(seed, static_cast<uint64_t>(step), 0, kStreamPairMatching)));
  std::vector<int> partner(n, -1);
  for (size_t k = 0; k + 1 < n; k += 2) {
    partner[static_cast<size_t>(order[k])] = order[k + 1];
    partner[static_cast<size_t>(order[k + 1])] = order[k];
  }
  return partner;
}

}  // namespace dtbench::trainer
