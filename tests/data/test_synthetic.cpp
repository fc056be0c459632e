#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include "catch_torch.h"
#include "data/dataset.h"

#include "data/synthetic.h"

using dtbench::data::makeSynthetic;
using dtbench::data::SyntheticOptions;

namespace {

SyntheticOptions small(uint64_t seed = 0) {
  SyntheticOptions o;
  o.trainSize = 2000;
  o.testSize = 500;
  o.seed = seed;
  return o;
}

}  // namespace

TEST_CASE("makeSynthetic is deterministic and depends on the seed", "[synthetic]") {
  const auto a = makeSynthetic(small());
  const auto b = makeSynthetic(small());
  CHECK(at::equal(a.train.images, b.train.images));
  CHECK(at::equal(a.train.labels, b.train.labels));
  CHECK(at::equal(a.test.images, b.test.images));
  CHECK(a.train.mean == b.train.mean);
  const auto other = makeSynthetic(small(1));
  CHECK_FALSE(at::equal(a.train.images, other.train.images));
  CHECK_FALSE(at::equal(a.train.labels, other.train.labels));
  // Train and test are different samples of the same distribution.
  CHECK_FALSE(at::equal(a.train.images.slice(0, 0, 500), a.test.images));
}

TEST_CASE("makeSynthetic does not depend on the thread count", "[synthetic]") {
  const int previous = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = makeSynthetic(small(4));
  at::set_num_threads(4);
  const auto four = makeSynthetic(small(4));
  at::set_num_threads(previous);
  CHECK(at::equal(one.train.images, four.train.images));
  CHECK(at::equal(one.test.labels, four.test.labels));
}

TEST_CASE("makeSynthetic: shapes and dtypes and names and label range and balance", "[synthetic]") {
  SECTION("CIFAR-shaped") {
    const auto s = makeSynthetic(small());
    CHECK(s.train.name == "synthetic/train");
    CHECK(s.test.name == "synthetic/test");
    CHECK(s.train.images.sizes() == at::IntArrayRef({2000, 3, 32, 32}));
    CHECK(s.test.images.sizes() == at::IntArrayRef({500, 3, 32, 32}));
    CHECK(s.train.images.scalar_type() == at::kByte);
    CHECK(s.train.labels.scalar_type() == at::kLong);
    CHECK(s.train.images.is_contiguous());
    CHECK(s.train.numClasses == 10);
    CHECK(s.train.labels.min().item<int64_t>() == 0);
    CHECK(s.train.labels.max().item<int64_t>() == 9);
    const auto counts = at::bincount(s.train.labels, {}, 10);
    CHECK(counts.min().item<int64_t>() > 150);  // 200 expected per class
    CHECK(counts.max().item<int64_t>() < 250);
    // Pixels use most of the byte range, like real images.
    CHECK(s.train.images.min().item<uint8_t>() < 20);
    CHECK(s.train.images.max().item<uint8_t>() > 230);
  }
  SECTION("odd shapes") {
    SyntheticOptions o;
    o.trainSize = 7;
    o.testSize = 0;
    o.channels = 1;
    o.height = 5;
    o.width = 3;
    o.numClasses = 2;
    const auto s = makeSynthetic(o);
    CHECK(s.train.images.sizes() == at::IntArrayRef({7, 1, 5, 3}));
    CHECK(s.test.size() == 0);
    CHECK(s.test.images.sizes() == at::IntArrayRef({0, 1, 5, 3}));
    CHECK(s.train.mean.size() == 1);
    CHECK(s.test.std.size() == 1);
    CHECK(((s.train.labels >= 0).all().item<bool>() && (s.train.labels < 2).all().item<bool>()));
    o.height = 1;
    o.width = 1;
    o.channels = 4;
    CHECK(makeSynthetic(o).train.images.sizes() == at::IntArrayRef({7, 4, 1, 1}));
  }
  SECTION("no training set: statistics come from the test set") {
    SyntheticOptions o = small();
    o.trainSize = 0;
    const auto s = makeSynthetic(o);
    CHECK(s.train.size() == 0);
    CHECK(s.train.mean.size() == 3);
    CHECK(s.train.mean[0] > 0.1);
  }
}

TEST_CASE("makeSynthetic: mean and std are the training set's per-channel statistics",
          "[synthetic]") {
  const auto s = makeSynthetic(small(2));
  const auto pixels = s.train.images.to(at::kDouble).div(255.0).transpose(0, 1).reshape({3, -1});
  const auto mean = pixels.mean(1);
  const auto std = pixels.std(1, /*unbiased=*/false);
  REQUIRE(s.train.mean.size() == 3);
  for (int64_t c = 0; c < 3; ++c) {
    CHECK(s.train.mean[static_cast<size_t>(c)] == Approx(mean[c].item<double>()).epsilon(1e-9));
    CHECK(s.train.std[static_cast<size_t>(c)] == Approx(std[c].item<double>()).epsilon(1e-6));
    CHECK(s.test.mean[static_cast<size_t>(c)] == s.train.mean[static_cast<size_t>(c)]);
    CHECK(s.test.std[static_cast<size_t>(c)] == s.train.std[static_cast<size_t>(c)]);
  }
}

TEST_CASE("makeSynthetic is learnable: nearest class mean classifies the test set",
          "[synthetic]") {
  const auto s = makeSynthetic(small(6));
  const auto train = s.train.images.to(at::kFloat).reshape({s.train.size(), -1});
  const auto test = s.test.images.to(at::kFloat).reshape({s.test.size(), -1});
  std::vector<at::Tensor> centroids;
  for (int64_t k = 0; k < 10; ++k) {
    centroids.push_back(train.index({s.train.labels == k}).mean(0));
  }
  const auto distances = at::cdist(test, at::stack(centroids));  // [test, 10]
  const auto predicted = distances.argmin(1);
  const double accuracy = predicted.eq(s.test.labels).to(at::kDouble).mean().item<double>();
  INFO("nearest-centroid test accuracy " << accuracy);
  CHECK(accuracy > 0.9);  // chance is 0.1

  // The class signal is coarse (it survives pooling, as a CNN's does): 8x8 average pooling.
  const auto pooled = [](const at::Tensor& images) {
    return at::avg_pool2d(images.to(at::kFloat), {8, 8}).reshape({images.size(0), -1});
  };
  const auto trainPooled = pooled(s.train.images);
  std::vector<at::Tensor> pooledCentroids;
  for (int64_t k = 0; k < 10; ++k) {
    pooledCentroids.push_back(trainPooled.index({s.train.labels == k}).mean(0));
  }
  const double pooledAccuracy = at::cdist(pooled(s.test.images), at::stack(pooledCentroids))
                                    .argmin(1)
                                    .eq(s.test.labels)
                                    .to(at::kDouble)
                                    .mean()
                                    .item<double>();
  INFO("after 8x8 average pooling " << pooledAccuracy);
  CHECK(pooledAccuracy > 0.9);
}

TEST_CASE("makeSynthetic validates its options", "[synthetic]") {
  auto with = [](auto change) {
    SyntheticOptions o;
    o.trainSize = 10;
    o.testSize = 10;
    change(o);
    return o;
  };
  CHECK_THROWS_WITH(makeSynthetic(with([](auto& o) { o.trainSize = -1; })),
                    Catch::Contains("training set size must be >= 0, got -1"));
  CHECK_THROWS_WITH(makeSynthetic(with([](auto& o) { o.testSize = -2; })),
                    Catch::Contains("got -2"));
  CHECK_THROWS_AS(makeSynthetic(with([](auto& o) { o.channels = 0; })), std::invalid_argument);
  CHECK_THROWS_AS(makeSynthetic(with([](auto& o) { o.height = 0; })), std::invalid_argument);
  CHECK_THROWS_AS(makeSynthetic(with([](auto& o) { o.width = -3; })), std::invalid_argument);
  CHECK_THROWS_WITH(makeSynthetic(with([](auto& o) { o.numClasses = 1; })),
                    Catch::Contains("number of classes must be >= 2, got 1"));
}

TEST_CASE("makeSynthetic generation time for 60000 CIFAR-shaped images on one thread",
          "[.][bench]") {
  const int previous = at::get_num_threads();
  at::set_num_threads(1);
  const auto start = std::chrono::steady_clock::now();
  const auto s = makeSynthetic(SyntheticOptions{});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  at::set_num_threads(previous);
  std::cout << "makeSynthetic default (60,000 images), 1 thread: " << seconds << " s\n";
  CHECK(s.train.size() == 50000);
}
