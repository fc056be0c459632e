#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <ratio>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include "catch_torch.h"

#include "data/augment.h"

using dtbench::data::augmentBatch;
using dtbench::data::normalize;
using dtbench::data::SampleAugment;
using dtbench::data::sampleAugment;

namespace {

const std::vector<double> kMean = {0.4914, 0.4822};
const std::vector<double> kStd = {0.2023, 0.1994};

// uint8 [B, C, H, W] from a flat list of values.
at::Tensor bytes(const std::vector<int>& values, std::vector<int64_t> shape) {
  auto t = at::empty(shape, at::kByte);
  REQUIRE(t.numel() == static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), t.data_ptr<uint8_t>());
  return t;
}

// The reference: one image at a time, pixel by pixel, exactly as the header describes it.
at::Tensor referenceCrop(const at::Tensor& images, const std::vector<SampleAugment>& params,
                         int64_t padding) {
  const auto src = images.contiguous();
  auto out = at::empty_like(src);
  const int64_t b = src.size(0), c = src.size(1), h = src.size(2), w = src.size(3);
  const auto* in = src.data_ptr<uint8_t>();
  auto* o = out.data_ptr<uint8_t>();
  for (int64_t i = 0; i < b; ++i) {
    const auto& p = params[static_cast<size_t>(i)];
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const int64_t cx = p.flip ? w - 1 - x : x;  // column inside the crop
          const int64_t sy = p.dy + y - padding;       // row in the original image
          const int64_t sx = p.dx + cx - padding;
          const bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
          o[((i * c + ch) * h + y) * w + x] =
              inside ? in[((i * c + ch) * h + sy) * w + sx] : uint8_t{0};
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("sampleAugment: deterministic and in range and roughly uniform", "[augment]") {
  const int64_t padding = 4;
  const int kSamples = 18000;
  std::array<int, 9> dyCount{};
  std::array<int, 9> dxCount{};
  int flips = 0;
  int sameOffsets = 0;
  for (int64_t i = 0; i < kSamples; ++i) {
    const auto a = sampleAugment(17, 2, i, padding, true);
    const auto again = sampleAugment(17, 2, i, padding, true);
    REQUIRE((a.dy == again.dy && a.dx == again.dx && a.flip == again.flip));
    REQUIRE((a.dy >= 0 && a.dy <= 2 * padding));
    REQUIRE((a.dx >= 0 && a.dx <= 2 * padding));
    ++dyCount[static_cast<size_t>(a.dy)];
    ++dxCount[static_cast<size_t>(a.dx)];
    flips += a.flip ? 1 : 0;
    sameOffsets += a.dy == a.dx ? 1 : 0;
  }
  CHECK(flips / static_cast<double>(kSamples) == Approx(0.5).margin(0.02));
  for (size_t v = 0; v < 9; ++v) {
    INFO("offset " << v);
    CHECK(dyCount[v] == Approx(kSamples / 9).margin(kSamples / 9 * 0.1));
    CHECK(dxCount[v] == Approx(kSamples / 9).margin(kSamples / 9 * 0.1));
  }
  // dy and dx are independent: equal about 1/9 of the time.
  CHECK(sameOffsets / static_cast<double>(kSamples) == Approx(1.0 / 9).margin(0.02));
}

TEST_CASE("sampleAugment: flip off never flips and padding 0 never moves and epochs differ",
          "[augment]") {
  int differ = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    const auto noFlip = sampleAugment(1, 0, i, 4, false);
    CHECK_FALSE(noFlip.flip);
    const auto flipOn = sampleAugment(1, 0, i, 4, true);
    CHECK((noFlip.dy == flipOn.dy && noFlip.dx == flipOn.dx));  // flip is its own stream
    const auto still = sampleAugment(1, 0, i, 0, true);
    CHECK((still.dy == 0 && still.dx == 0));
    const auto next = sampleAugment(1, 1, i, 4, true);
    differ += (next.dy != flipOn.dy || next.dx != flipOn.dx || next.flip != flipOn.flip) ? 1 : 0;
  }
  CHECK(differ > 900);
  CHECK_THROWS_AS(sampleAugment(1, 0, 0, -1, true), std::invalid_argument);
}

TEST_CASE("normalize computes (x / 255 - mean[c]) / std[c] in float32", "[augment]") {
  std::vector<int> values(2 * 2 * 16 * 16);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<int>(i % 256);
  }
  const auto images = bytes(values, {2, 2, 16, 16});
  const auto out = normalize(images, kMean, kStd);
  REQUIRE(out.scalar_type() == at::kFloat);
  REQUIRE(out.sizes() == images.sizes());
  const auto* o = out.data_ptr<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t c = (i / 256) % 2;
    // torchvision's order in float32: ToTensor (x / 255) then Normalize (- mean, / std)
    const float expected = (static_cast<float>(values[i]) / 255.0f - static_cast<float>(kMean[c])) /
                           static_cast<float>(kStd[c]);
    const double exact = (values[i] / 255.0 - kMean[c]) / kStd[c];
    INFO("element " << i);
    CHECK(o[i] == expected);
    CHECK(o[i] == Approx(exact).margin(1e-6));
  }
}

TEST_CASE("augmentBatch: zero padding and crop offsets and flip on a hand-made image",
          "[augment]") {
  // One image, 2 channels of 3x4: channel 0 holds 1..12, channel 1 holds 101..112.
  std::vector<int> values;
  for (int c = 0; c < 2; ++c) {
    for (int v = 1; v <= 12; ++v) {
      values.push_back(100 * c + v);
    }
  }
  const auto image = bytes(values, {1, 2, 3, 4});
  // Channel 0 is   1  2  3  4  ; padded by 1:  0  0  0  0  0  0
  //                5  6  7  8                  0  1  2  3  4  0
  //                9 10 11 12                  0  5  6  7  8  0
  //                                            0  9 10 11 12  0
  //                                            0  0  0  0  0  0
  struct Case {
    SampleAugment params;
    std::vector<int> channel0;  // expected crop of channel 0, row-major
  };
  const std::vector<Case> cases = {
      {{1, 1, false}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},   // the original
      {{0, 0, false}, {0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7}},       // moved down and right
      {{2, 2, false}, {6, 7, 8, 0, 10, 11, 12, 0, 0, 0, 0, 0}},    // moved up and left
      {{0, 2, false}, {0, 0, 0, 0, 2, 3, 4, 0, 6, 7, 8, 0}},       // down and left
      {{1, 1, true}, {4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9}},     // columns reversed
      {{0, 2, true}, {0, 0, 0, 0, 0, 4, 3, 2, 0, 8, 7, 6}},        // crop, then flip
  };
  for (const auto& [params, channel0] : cases) {
    INFO("dy " << params.dy << " dx " << params.dx << " flip " << params.flip);
    std::vector<int> expected = channel0;
    for (int v : channel0) {
      expected.push_back(v == 0 ? 0 : v + 100);
    }
    const auto out = augmentBatch(image, {params}, 1, kMean, kStd);
    REQUIRE(out.scalar_type() == at::kFloat);
    REQUIRE(out.sizes() == image.sizes());
    CHECK(at::equal(out, normalize(bytes(expected, {1, 2, 3, 4}), kMean, kStd)));
  }
  // A padded pixel is zero in pixel space: -mean/std after normalization.
  const auto moved = augmentBatch(image, {{0, 0, false}}, 1, kMean, kStd);
  CHECK(moved[0][0][0][0].item<float>() == Approx(-kMean[0] / kStd[0]).epsilon(1e-6));
  CHECK(moved[0][1][2][0].item<float>() == Approx(-kMean[1] / kStd[1]).epsilon(1e-6));
  CHECK(moved[0][0][1][1].item<float>() == Approx((1 / 255.0 - kMean[0]) / kStd[0]).epsilon(1e-6));
}

TEST_CASE("augmentBatch equals a per-pixel reference on random batches", "[augment]") {
  at::manual_seed(3);
  for (int64_t padding : {0, 1, 4}) {
    const int64_t batch = 37;
    const auto images = at::randint(0, 256, {batch, 2, 9, 7}, at::kByte);
    std::vector<SampleAugment> params;
    for (int64_t i = 0; i < batch; ++i) {
      params.push_back(sampleAugment(5, 1, i, padding, true));
    }
    INFO("padding " << padding);
    const auto out = augmentBatch(images, params, padding, kMean, kStd);
    CHECK(at::equal(out, normalize(referenceCrop(images, params, padding), kMean, kStd)));
    // A non-contiguous batch gives the same result.
    const auto strided = images.transpose(2, 3).contiguous().transpose(2, 3);
    REQUIRE_FALSE(strided.is_contiguous());
    CHECK(at::equal(augmentBatch(strided, params, padding, kMean, kStd), out));
  }
}

TEST_CASE("augmentBatch handles an empty batch and rejects bad input", "[augment]") {
  const auto empty = at::empty({0, 2, 4, 4}, at::kByte);
  CHECK(augmentBatch(empty, {}, 4, kMean, kStd).sizes() == empty.sizes());
  const auto images = at::zeros({2, 2, 4, 4}, at::kByte);
  const std::vector<SampleAugment> two = {{0, 0, false}, {8, 8, true}};
  CHECK_NOTHROW(augmentBatch(images, two, 4, kMean, kStd));
  CHECK_THROWS_WITH(augmentBatch(images, {{0, 0, false}}, 4, kMean, kStd),
                    Catch::Contains("1 augmentation parameters for a batch of 2"));
  CHECK_THROWS_WITH(augmentBatch(images, {{0, 0, false}, {9, 0, false}}, 4, kMean, kStd),
                    Catch::Contains("outside [0, 8]"));
  CHECK_THROWS_WITH(augmentBatch(images, two, 4, {0.5}, {0.5}),
                    Catch::Contains("2 channels but mean has 1"));
  CHECK_THROWS_WITH(augmentBatch(images.to(at::kFloat), two, 4, kMean, kStd),
                    Catch::Contains("expected uint8 images"));
  CHECK_THROWS_AS(normalize(images, kMean, {0.2, 0.0}), std::invalid_argument);
}

TEST_CASE("augmentBatch throughput for 128x3x32x32 on one thread", "[.][bench]") {
  const int previousThreads = at::get_num_threads();
  at::set_num_threads(1);
  const auto images = at::randint(0, 256, {128, 3, 32, 32}, at::kByte);
  std::vector<SampleAugment> params;
  for (int64_t i = 0; i < 128; ++i) {
    params.push_back(sampleAugment(0, 0, i, 4, true));
  }
  const std::vector<double> mean = {0.4914, 0.4822, 0.4465};
  const std::vector<double> std = {0.2023, 0.1994, 0.2010};
  auto timeIt = [&](auto&& fn) {
    std::vector<double> ms;
    for (int rep = 0; rep < 300; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      fn();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             start)
                       .count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const double augment = timeIt([&] { augmentBatch(images, params, 4, mean, std); });
  const double plain = timeIt([&] { normalize(images, mean, std); });
  std::cout << "augmentBatch 128x3x32x32, 1 thread: median " << augment << " ms (normalize alone "
            << plain << " ms)\n";
  at::set_num_threads(previousThreads);
  CHECK(augment > 0);
}
