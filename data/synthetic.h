#pragma once
// Synthetic datasets: deterministic, learnable uint8 images of any shape, for throughput runs and
// for tests that need no download.
//
// Each class has a prototype image: a coarse grid of at most 4x4 flat cells per channel (values in
// [48, 207], like a blurry photograph) plus a fixed fine texture in [-16, 15]. A sample is its
// class's prototype plus independent per-pixel noise in [-32, 31], so pixels stay in [0, 253]
// without clipping. Classes are far apart relative to the noise: a nearest-prototype classifier
// is almost always right, and a small CNN's loss falls within a few dozen steps, yet the images
// have the size and value range of real ones.
//
// Randomness (all from counterHash, never at::rand, so identical across LibTorch versions and
// thread counts): prototype k from stream kStreamSyntheticPrototype at (seed, 0, k); sample i of
// split s (0 = train, 1 = test) takes its label hashBelow(counterHash(seed, s, i,
// kStreamSyntheticLabel), numClasses) and its noise from SplitMix64 seeded with counterHash(seed,
// s, i, kStreamSyntheticNoise). Train and test share the prototypes (one distribution) and differ
// in their sample streams. mean/std are measured per channel on the generated training set (on
// the test set when there is no training set).

#include <cstdint>

#include "data/dataset.h"

namespace dtbench::data {

struct SyntheticOptions {
  int64_t trainSize = 50000;
  int64_t testSize = 10000;
  int64_t channels = 3;
  int64_t height = 32;
  int64_t width = 32;
  int64_t numClasses = 10;
  uint64_t seed = 0;
};

// Sizes >= 0, shapes >= 1 and numClasses >= 2, std::invalid_argument otherwise.
DatasetSplits makeSynthetic(const SyntheticOptions& options);

}  // namespace dtbench::data
