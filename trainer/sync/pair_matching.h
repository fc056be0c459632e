#pragma once
// Pair averaging's schedule (docs/design.md, "Gradient synchronization", `--sync pairavg`): who
// averages with whom.
//
// Contract: pairPartners(worldSize, seed, step)[r] is rank r's partner at global step `step`, or -1
// when r sits the step out. A pure function of (worldSize, seed, step): every rank computes the
// same matching without communicating, on every platform and LibTorch version. The matching is
// perfect: partner[partner[r]] == r and partner[r] != r; an even world pairs every rank, an odd
// world leaves exactly one rank (partner -1) out.
//
// Schedule: a Fisher-Yates shuffle of the ranks 0..N-1 (the one of data/sampler.h's
// epochPermutation), driven by SplitMix64 seeded from counterHash(seed, step, 0,
// kStreamPairMatching); consecutive entries of the shuffled list are paired and with N odd its last
// entry sits out. Every matching of the world is equally likely, so over many steps every pair of
// ranks meets: a given pair is matched with probability 1 / (N - 1) per step for N even, 1 / N for
// N odd. Worked example: N = 5, if the shuffled list is 3 0 4 1 2 -> pairs 3-0 and 4-1, rank 2
// sits out:
//   partner = {3, 4, -1, 0, 1}.
// Cost: O(N) time and memory per step, no communication.

#include <cstdint>
#include <vector>

namespace dtbench::trainer {

// counterHash stream of the matching shuffle: "pairavg" in ASCII, far from data/'s small stream
// numbers, so the matching is independent of the data shuffle and augmentation draws.
inline constexpr uint64_t kStreamPairMatching = 0x0070616972617667ULL;

// Partners of every rank; see the contract above. worldSize >= 1 and step >= 0, otherwise
// std::invalid_argument. A world of 1 gives {-1}.
std::vector<int> pairPartners(int worldSize, uint64_t seed, int64_t step);

}  // namespace dtbench::trainer
