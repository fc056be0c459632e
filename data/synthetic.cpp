#include "data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/Parallel.h>

#include "common/counter_hash.h"
#include "common/split_mix64.h"
#include "data/random_streams.h"

namespace dtbench::data {

namespace {

constexpr int64_t kMaxCells = 4;        // prototype cells per axis
constexpr int kCellBase = 48;           // cell values in [kCellBase, kCellBase + kCellSpan)
constexpr int kCellSpan = 160;
constexpr int kTextureSpan = 32;        // texture in [-kTextureSpan/2, kTextureSpan/2)
constexpr int kNoiseSpan = 64;          // noise in [-kNoiseSpan/2, kNoiseSpan/2)
static_assert(kCellBase - kTextureSpan / 2 - kNoiseSpan / 2 >= 0, "pixels must not clip at 0");
static_assert(kCellBase + kCellSpan - 1 + kTextureSpan / 2 - 1 + kNoiseSpan / 2 - 1 <= 255,
              "pixels must not clip at 255");
constexpr int64_t kSamplesPerTask = 64;  // at::parallel_for grain

// A uniform value in [0, span) from one random byte (span <= 256).
inline int scaledByte(uint64_t byte, int span) { return static_cast<int>((byte * span) >> 8); }

// Draws one random byte at a time from a SplitMix64 sequence, eight per word.
class ByteStream {
 public:
  explicit ByteStream(uint64_t state) : rng_(state) {}
  uint64_t next() {
    if (left_ == 0) {
      word_ = rng_.next();
      left_ = 8;
    }
    const uint64_t byte = word_ & 0xff;
    word_ >>= 8;
    --left_;
    return byte;
  }

 private:
  common::SplitMix64 rng_;
  uint64_t word_ = 0;
  int left_ = 0;
};

void validate(const SyntheticOptions& o) {
  auto require = [](bool ok, const std::string& what, int64_t value) {
    if (!ok) {
      throw std::invalid_argument("synthetic dataset: " + what + ", got " +
                                  std::to_string(value));
    }
  };
  require(o.trainSize >= 0, "the training set size must be >= 0", o.trainSize);
  require(o.testSize >= 0, "the test set size must be >= 0", o.testSize);
  require(o.channels >= 1, "the number of channels must be >= 1", o.channels);
  require(o.height >= 1, "the image height must be >= 1", o.height);
  require(o.width >= 1, "the image width must be >= 1", o.width);
  require(o.numClasses >= 2, "the number of classes must be >= 2", o.numClasses);
}

// numClasses prototype images, uint8 [K, C, H, W] laid out contiguously.
std::vector<uint8_t> makePrototypes(const SyntheticOptions& o) {
  const int64_t cellsY = std::min(o.height, kMaxCells);
  const int64_t cellsX = std::min(o.width, kMaxCells);
  const int64_t plane = o.height * o.width;
  std::vector<uint8_t> prototypes(static_cast<size_t>(o.numClasses * o.channels * plane));
  std::vector<int> cells(static_cast<size_t>(cellsY * cellsX));
  for (int64_t k = 0; k < o.numClasses; ++k) {
    ByteStream bytes(common::counterHash(o.seed, 0, static_cast<uint64_t>(k), kStreamSyntheticPrototype));
    for (int64_t c = 0; c < o.channels; ++c) {
      for (auto& cell : cells) {
        cell = kCellBase + scaledByte(bytes.next(), kCellSpan);
      }
      uint8_t* out = prototypes.data() + (k * o.channels + c) * plane;
      for (int64_t y = 0; y < o.height; ++y) {
        const int* cellRow = cells.data() + (y * cellsY / o.height) * cellsX;
        for (int64_t x = 0; x < o.width; ++x) {
          const int texture = scaledByte(bytes.next(), kTextureSpan) - kTextureSpan / 2;
          out[y * o.width + x] = static_cast<uint8_t>(cellRow[x * cellsX / o.width] + texture);
        }
      }
    }
  }
  return prototypes;
}

Dataset makeSplit(const SyntheticOptions& o, const std::vector<uint8_t>& prototypes,
                  uint64_t split, int64_t size, const std::string& name) {
  const int64_t plane = o.height * o.width;
  const int64_t imageBytes = o.channels * plane;
  Dataset dataset;
  dataset.name = name;
  dataset.numClasses = o.numClasses;
  dataset.images = at::empty({size, o.channels, o.height, o.width}, at::kByte);
  dataset.labels = at::empty({size}, at::kLong);
  uint8_t* images = dataset.images.data_ptr<uint8_t>();
  int64_t* labels = dataset.labels.data_ptr<int64_t>();
  at::parallel_for(0, size, kSamplesPerTask, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto index = static_cast<uint64_t>(i);
      const auto label = static_cast<int64_t>(common::hashBelow(
          common::counterHash(o.seed, split, index, kStreamSyntheticLabel),
          static_cast<uint64_t>(o.numClasses)));
      labels[i] = label;
      const uint8_t* prototype = prototypes.data() + label * imageBytes;
      uint8_t* out = images + i * imageBytes;
      common::SplitMix64 rng(common::counterHash(o.seed, split, index, kStreamSyntheticNoise));
      int64_t p = 0;
      for (; p + 8 <= imageBytes; p += 8) {
        uint64_t word = rng.next();
        for (int b = 0; b < 8; ++b, word >>= 8) {
          const int noise = scaledByte(word & 0xff, kNoiseSpan) - kNoiseSpan / 2;
          out[p + b] = static_cast<uint8_t>(prototype[p + b] + noise);
        }
      }
      for (uint64_t word = p < imageBytes ? rng.next() : 0; p < imageBytes; ++p, word >>= 8) {
        const int noise = scaledByte(word & 0xff, kNoiseSpan) - kNoiseSpan / 2;
        out[p] = static_cast<uint8_t>(prototype[p] + noise);
      }
    }
  });
  return dataset;
}

// Per-channel mean and std of pixel / 255 over all images of `dataset` (exact integer sums).
void measureStatistics(Dataset& dataset, const Dataset& source) {
  const int64_t n = source.size();
  const int64_t channels = source.images.size(1);
  const int64_t plane = source.images.size(2) * source.images.size(3);
  dataset.mean.assign(static_cast<size_t>(channels), 0.0);
  dataset.std.assign(static_cast<size_t>(channels), 1.0);
  if (n == 0) {
    return;
  }
  const uint8_t* images = source.images.data_ptr<uint8_t>();
  for (int64_t c = 0; c < channels; ++c) {
    uint64_t sum = 0;
    uint64_t squares = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* pixels = images + (i * channels + c) * plane;
      uint64_t planeSum = 0;
      uint64_t planeSquares = 0;
      for (int64_t p = 0; p < plane; ++p) {
        planeSum += pixels[p];
        planeSquares += static_cast<uint32_t>(pixels[p]) * pixels[p];
      }
      sum += planeSum;
      squares += planeSquares;
    }
    const double count = static_cast<double>(n) * static_cast<double>(plane);
    const double mean = static_cast<double>(sum) / count / 255.0;
    const double variance =
        static_cast<double>(squares) / count / (255.0 * 255.0) - mean * mean;
    const double stdDev = std::sqrt(std::max(variance, 0.0));
    dataset.mean[static_cast<size_t>(c)] = mean;
    dataset.std[static_cast<size_t>(c)] = stdDev > 1e-6 ? stdDev : 1.0;
  }
}

}  // namespace

DatasetSplits makeSynthetic(const SyntheticOptions& options) {
  validate(options);
  const auto prototypes = makePrototypes(options);
  DatasetSplits splits;
  splits.train = makeSplit(options, prototypes, 0, options.trainSize, "synthetic/train");
  splits.test = makeSplit(options, prototypes, 1, options.testSize, "synthetic/test");
  const Dataset& source = options.trainSize > 0 ? splits.train : splits.test;
  measureStatistics(splits.train, source);
  splits.test.mean = splits.train.mean;
  splits.test.std = splits.train.std;
  return splits;
}

}  // namespace dtbench::data
