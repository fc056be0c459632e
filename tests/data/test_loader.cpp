#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include "catch_torch.h"
#include "data/dataset.h"

#include "data/augment.h"
#include "data/loader.h"
#include "data/sampler.h"
#include "data/synthetic.h"

using dtbench::data::Batch;
using dtbench::data::Dataset;
using dtbench::data::Loader;
using dtbench::data::LoaderOptions;

namespace {

Dataset smallDataset(int64_t n) {
  dtbench::data::SyntheticOptions o;
  o.trainSize = n;
  o.testSize = 0;
  o.height = 8;
  o.width = 8;
  o.seed = 21;
  return dtbench::data::makeSynthetic(o).train;
}

LoaderOptions options(int64_t batchSize, int64_t rank = 0, int64_t worldSize = 1) {
  LoaderOptions o;
  o.batchSize = batchSize;
  o.rank = rank;
  o.worldSize = worldSize;
  o.seed = 77;
  return o;
}

std::vector<Batch> wholeEpoch(Loader& loader, int64_t epoch) {
  loader.startEpoch(epoch);
  std::vector<Batch> batches;
  while (auto b = loader.next()) {
    batches.push_back(std::move(*b));
  }
  return batches;
}

std::vector<int64_t> indicesOf(const std::vector<Batch>& batches) {
  std::vector<int64_t> all;
  for (const auto& b : batches) {
    all.insert(all.end(), b.indices.begin(), b.indices.end());
  }
  return all;
}

}  // namespace

TEST_CASE("Loader: batches per epoch and last batch size and dropLast", "[loader]") {
  const auto data = smallDataset(50);
  SECTION("one rank") {
    Loader keep(data, options(8));
    CHECK(keep.samplesPerEpoch() == 50);
    CHECK(keep.batchesPerEpoch() == 7);
    const auto batches = wholeEpoch(keep, 0);
    REQUIRE(batches.size() == 7);
    CHECK(batches.back().indices.size() == 2);
    CHECK(batches.back().images.size(0) == 2);
    CHECK(batches.back().labels.size(0) == 2);
    CHECK(batches.front().images.sizes() == at::IntArrayRef({8, 3, 8, 8}));
    CHECK(batches.front().images.scalar_type() == at::kFloat);
    CHECK(batches.front().labels.scalar_type() == at::kLong);

    auto dropOptions = options(8);
    dropOptions.dropLast = true;
    Loader drop(data, dropOptions);
    CHECK(drop.batchesPerEpoch() == 6);
    const auto dropped = wholeEpoch(drop, 0);
    REQUIRE(dropped.size() == 6);
    for (const auto& b : dropped) {
      CHECK(b.indices.size() == 8);
    }
  }
  SECTION("three ranks") {
    Loader keep(data, options(8, 2, 3));
    CHECK(keep.samplesPerEpoch() == 17);  // ceil(50 / 3), padded by wrapping
    CHECK(keep.batchesPerEpoch() == 3);
    CHECK(wholeEpoch(keep, 0).back().indices.size() == 1);
    auto dropOptions = options(8, 2, 3);
    dropOptions.dropLast = true;
    Loader drop(data, dropOptions);
    CHECK(drop.samplesPerEpoch() == 16);  // floor(50 / 3)
    CHECK(drop.batchesPerEpoch() == 2);
  }
  SECTION("an exact multiple") {
    Loader exact(data, options(10));
    CHECK(exact.batchesPerEpoch() == 5);
    CHECK(wholeEpoch(exact, 0).back().indices.size() == 10);
  }
}

TEST_CASE("Loader: one epoch covers every sample once and with the right labels", "[loader]") {
  const auto data = smallDataset(50);
  Loader loader(data, options(16));
  const auto batches = wholeEpoch(loader, 3);
  auto all = indicesOf(batches);
  CHECK(all == dtbench::data::epochPermutation(77, 3, 50));
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(50);
  std::iota(expected.begin(), expected.end(), int64_t{0});
  CHECK(all == expected);
  for (const auto& b : batches) {
    for (size_t i = 0; i < b.indices.size(); ++i) {
      CHECK(b.labels[static_cast<int64_t>(i)].item<int64_t>() ==
            data.labels[b.indices[i]].item<int64_t>());
    }
  }
}

TEST_CASE("Loader: the test loader keeps dataset order and only normalizes", "[loader]") {
  const auto data = smallDataset(23);
  auto o = options(10);
  o.train = false;
  Loader loader(data, o);
  const auto batches = wholeEpoch(loader, 5);
  REQUIRE(batches.size() == 3);
  std::vector<int64_t> expected(23);
  std::iota(expected.begin(), expected.end(), int64_t{0});
  CHECK(indicesOf(batches) == expected);
  CHECK(at::equal(batches[1].images,
                  dtbench::data::normalize(data.images.slice(0, 10, 20), data.mean, data.std)));
  CHECK(at::equal(batches[2].labels, data.labels.slice(0, 20, 23)));
}

TEST_CASE("Loader: deterministic per epoch and different across epochs", "[loader]") {
  const auto data = smallDataset(50);
  Loader a(data, options(8));
  Loader b(data, options(8));
  const auto first = wholeEpoch(a, 1);
  const auto again = wholeEpoch(b, 1);
  REQUIRE(first.size() == again.size());
  for (size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].indices == again[i].indices);
    CHECK(at::equal(first[i].images, again[i].images));
    CHECK(at::equal(first[i].labels, again[i].labels));
  }
  // batch() is the same pure function, in any order.
  CHECK(at::equal(a.batch(1, 4).images, first[4].images));
  CHECK(a.batch(1, 0).indices == first[0].indices);
  const auto other = wholeEpoch(a, 2);
  CHECK(indicesOf(other) != indicesOf(first));
  // next() stays exhausted until the next startEpoch.
  CHECK_FALSE(a.next().has_value());
  a.startEpoch(1);
  CHECK(a.next()->indices == first[0].indices);
}

TEST_CASE("Loader: batch() from several threads equals the serial result", "[loader]") {
  const auto data = smallDataset(200);
  Loader loader(data, options(16));
  const int64_t count = loader.batchesPerEpoch();
  std::vector<Batch> parallel(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t b = t; b < count; b += 4) {
        parallel[static_cast<size_t>(b)] = loader.batch(2, b);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (int64_t b = 0; b < count; ++b) {
    const auto serial = loader.batch(2, b);
    CHECK(parallel[static_cast<size_t>(b)].indices == serial.indices);
    CHECK(at::equal(parallel[static_cast<size_t>(b)].images, serial.images));
  }
}

TEST_CASE("Randomness contract: a sample's augmentation does not depend on batch size and rank "
          "count or batch",
          "[loader][contract]") {
  const auto data = smallDataset(50);
  const int64_t epoch = 4;
  // Sample index -> its augmented image, from every batch of every rank of one configuration.
  auto collect = [&](int64_t batchSize, int64_t worldSize) {
    std::map<int64_t, at::Tensor> images;
    int64_t repeats = 0;
    for (int64_t rank = 0; rank < worldSize; ++rank) {
      Loader loader(data, options(batchSize, rank, worldSize));
      for (const auto& b : wholeEpoch(loader, epoch)) {
        for (size_t i = 0; i < b.indices.size(); ++i) {
          const auto image = b.images[static_cast<int64_t>(i)];
          auto [it, inserted] = images.emplace(b.indices[i], image);
          if (!inserted) {
            // A sample repeated by the sampler's padding is augmented the same way.
            CHECK(at::equal(it->second, image));
            ++repeats;
          }
        }
      }
    }
    return std::make_pair(images, repeats);
  };
  const auto [one, oneRepeats] = collect(7, 1);
  const auto [two, twoRepeats] = collect(4, 2);
  const auto [three, threeRepeats] = collect(5, 3);
  CHECK(oneRepeats == 0);
  CHECK(twoRepeats == 0);
  CHECK(threeRepeats == 1);  // 50 samples padded to 51 over 3 ranks
  REQUIRE(one.size() == 50);
  REQUIRE(two.size() == 50);
  REQUIRE(three.size() == 50);
  int augmented = 0;
  for (int64_t i = 0; i < 50; ++i) {
    INFO("sample " << i);
    CHECK(at::equal(one.at(i), two.at(i)));
    CHECK(at::equal(one.at(i), three.at(i)));
    // ... and it is exactly sampleAugment(seed, epoch, i) applied to the sample alone.
    const auto alone = dtbench::data::augmentBatch(
        data.images.slice(0, i, i + 1), {dtbench::data::sampleAugment(77, epoch, i, 4, true)}, 4,
        data.mean, data.std);
    CHECK(at::equal(one.at(i), alone[0]));
    const auto plain = dtbench::data::normalize(data.images.slice(0, i, i + 1), data.mean,
                                                data.std);
    augmented += at::equal(one.at(i), plain[0]) ? 0 : 1;
  }
  CHECK(augmented > 40);  // almost every sample is cropped or flipped
}

TEST_CASE("Loader validates its options and naming the command-line option", "[loader]") {
  const auto data = smallDataset(10);
  CHECK_THROWS_WITH(Loader(data, options(0)), "--batch-size must be >= 1, got 0");
  CHECK_THROWS_WITH(Loader(data, options(4, 0, 0)), "--world-size must be >= 1, got 0");
  CHECK_THROWS_WITH(Loader(data, options(4, 2, 2)), Catch::Contains("--rank must be in [0, 1]"));
  auto o = options(4);
  o.padding = -1;
  CHECK_THROWS_AS(Loader(data, o), std::invalid_argument);
  Loader loader(data, options(4));
  CHECK_THROWS_AS(loader.batch(0, 3), std::invalid_argument);
  CHECK_THROWS_AS(loader.batch(0, -1), std::invalid_argument);
  CHECK_THROWS_AS(loader.startEpoch(-1), std::invalid_argument);
}

TEST_CASE("Loader on an empty dataset has no batches", "[loader]") {
  const auto data = smallDataset(0);
  Loader loader(data, options(4, 1, 2));
  CHECK(loader.samplesPerEpoch() == 0);
  CHECK(loader.batchesPerEpoch() == 0);
  CHECK_FALSE(loader.next().has_value());
}
