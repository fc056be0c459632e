#pragma once
// The streams of common::counterHash that data/ draws from, one per use (common/counter_hash.h).
// Never reuse a number for a new purpose: each one decides the shuffles and augmentations of every
// run made so far.

#include <cstdint>

#include "common/counter_hash.h"

namespace dtbench::data {

inline constexpr uint64_t kStreamShuffle = 1;
inline constexpr uint64_t kStreamCropY = 2;
inline constexpr uint64_t kStreamCropX = 3;
inline constexpr uint64_t kStreamFlip = 4;
inline constexpr uint64_t kStreamSyntheticLabel = 5;
inline constexpr uint64_t kStreamSyntheticPrototype = 6;
inline constexpr uint64_t kStreamSyntheticNoise = 7;
// Taken outside data/: 0x0070616972617667 ("pairavg"), trainer/sync/pair_matching.h's kStreamPairMatching.

}  // namespace dtbench::data
