#include "catch_torch.h"
#include "models/classifier.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <torch/torch.h>

#include "models/registry.h"
#include "trainer/sync/bucket_assignment.h"

// c10d's own bucket assignment, the oracle (docs/reference.md).
#include <torch/csrc/distributed/c10d/reducer.hpp>

using dtbench::trainer::assignBuckets;
using dtbench::trainer::BucketLimits;
using Buckets = std::vector<std::vector<size_t>>;

namespace {

constexpr int64_t kMiB = 1 << 20;

// A float32 tensor of `bytes` bytes (a multiple of 4).
at::Tensor floatBytes(int64_t bytes) { return torch::zeros({bytes / 4}); }
at::Tensor doubleBytes(int64_t bytes) { return torch::zeros({bytes / 8}, torch::kFloat64); }

// The buckets DDP rebuilds after its first iteration when gradients become ready
// in reverse parameter order: Reducer::rebuild_buckets passes the parameters in ready order, their
// indices as tensor_indices (so c10d does not sort) and the caps {first bucket, bucket cap}.
Buckets c10dBuckets(const std::vector<at::Tensor>& params, const BucketLimits& limits) {
  const std::vector<at::Tensor> readyOrder(params.rbegin(), params.rend());
  std::vector<int64_t> indices;
  for (auto i = static_cast<int64_t>(params.size()) - 1; i >= 0; --i) indices.push_back(i);
  const std::vector<size_t> caps{static_cast<size_t>(limits.firstBucketBytes),
                                 static_cast<size_t>(limits.bucketBytes)};
  const std::vector<bool> expectSparse(params.size(), false);
  return std::get<0>(c10d::compute_bucket_assignment_by_size(readyOrder, caps, expectSparse,
                                                             indices, std::nullopt));
}

bool coversEachIndexOnce(const Buckets& buckets, size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& bucket : buckets) {
    for (size_t i : bucket) {
      if (i >= n || seen[i]++) return false;
    }
  }
  return std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; });
}

}  // namespace

TEST_CASE("the first bucket closes at 1 MiB and later ones at the cap", "[bucket_assignment]") {
  // The worked example of trainer/sync/bucket_assignment.h.
  const std::vector<at::Tensor> params{floatBytes(kMiB / 2), floatBytes(3 * kMiB),
                                       floatBytes(kMiB / 2), floatBytes(2 * kMiB),
                                       floatBytes(kMiB / 4), floatBytes(kMiB)};
  const Buckets buckets = assignBuckets(params, BucketLimits{kMiB, 4 * kMiB});
  CHECK(buckets == Buckets{{5}, {4, 3, 2, 1}, {0}});
  CHECK(dtbench::trainer::bucketBytes(params, buckets[0]) == kMiB);
  CHECK(dtbench::trainer::bucketBytes(params, buckets[1]) == 5 * kMiB + 3 * kMiB / 4);
  CHECK(buckets == c10dBuckets(params, BucketLimits{kMiB, 4 * kMiB}));
}

TEST_CASE("a bucket takes the parameter that makes it reach its cap", "[bucket_assignment]") {
  // 0.75 MiB open, then 0.5 MiB: c10d adds it (1.25 MiB >= 1 MiB) and closes; it does not close
  // the bucket before the parameter that would take it over the cap.
  const std::vector<at::Tensor> params{floatBytes(kMiB / 2), floatBytes(kMiB / 2),
                                       floatBytes(3 * kMiB / 4)};
  CHECK(assignBuckets(params, BucketLimits{}) == Buckets{{2, 1}, {0}});
  CHECK(c10dBuckets(params, BucketLimits{}) == Buckets{{2, 1}, {0}});
}

TEST_CASE("a bucket that reaches its cap exactly closes", "[bucket_assignment]") {
  const std::vector<at::Tensor> params{floatBytes(kMiB / 4), floatBytes(kMiB / 4),
                                       floatBytes(3 * kMiB / 4)};
  CHECK(assignBuckets(params, BucketLimits{}) == Buckets{{2, 1}, {0}});
  CHECK(c10dBuckets(params, BucketLimits{}) == Buckets{{2, 1}, {0}});
}

TEST_CASE("a tensor larger than the cap closes the bucket it joins", "[bucket_assignment]") {
  // After a closed bucket, the 30 MiB tensor opens and closes a bucket of its own.
  const std::vector<at::Tensor> params{floatBytes(kMiB / 8), floatBytes(30 * kMiB),
                                       floatBytes(2 * kMiB), floatBytes(kMiB / 8)};
  const Buckets buckets = assignBuckets(params, BucketLimits{});
  CHECK(buckets == Buckets{{3, 2}, {1}, {0}});
  CHECK(dtbench::trainer::bucketBytes(params, buckets[1]) == 30 * kMiB);
  CHECK(buckets == c10dBuckets(params, BucketLimits{}));

  // Into an open bucket, it goes along with what is there.
  const std::vector<at::Tensor> joined{floatBytes(kMiB / 8), floatBytes(30 * kMiB),
                                       floatBytes(kMiB / 8)};
  CHECK(assignBuckets(joined, BucketLimits{}) == Buckets{{2, 1}, {0}});
  CHECK(c10dBuckets(joined, BucketLimits{}) == Buckets{{2, 1}, {0}});
}

TEST_CASE("float and double parameters go to separate buckets", "[bucket_assignment]") {
  // Each dtype has its own open bucket and its own 1 MiB first cap: the doubles close at 1 MiB,
  // and the floats, closing later, still close at their first cap of 1 MiB, not at 25 MiB.
  const std::vector<at::Tensor> params{floatBytes(kMiB / 2), doubleBytes(kMiB / 2),
                                       floatBytes(kMiB / 2), doubleBytes(kMiB / 2),
                                       floatBytes(kMiB / 4)};
  const Buckets buckets = assignBuckets(params, BucketLimits{});
  CHECK(buckets == Buckets{{3, 1}, {4, 2, 0}});
  CHECK(buckets == c10dBuckets(params, BucketLimits{}));
}

TEST_CASE("buckets left open follow in reverse order of the first visit to their dtype",
          "[bucket_assignment]") {
  // Visit order 3 (float), 2 (double), 1 (float), 0 (half): nothing reaches a cap.
  const std::vector<at::Tensor> params{torch::zeros({4}, torch::kFloat16), floatBytes(64),
                                       doubleBytes(64), floatBytes(64)};
  const Buckets buckets = assignBuckets(params, BucketLimits{});
  CHECK(buckets == Buckets{{0}, {2}, {3, 1}});
  CHECK(buckets == c10dBuckets(params, BucketLimits{}));
}

TEST_CASE("an empty parameter list has no buckets", "[bucket_assignment]") {
  CHECK(assignBuckets({}, BucketLimits{}).empty());
}

TEST_CASE("a zero cap puts every parameter in a bucket of its own", "[bucket_assignment]") {
  const std::vector<at::Tensor> params{floatBytes(8), floatBytes(4), floatBytes(12)};
  CHECK(assignBuckets(params, BucketLimits{0, 0}) == Buckets{{2}, {1}, {0}});
}

TEST_CASE("bucketBytes adds up numel times element size", "[bucket_assignment]") {
  const std::vector<at::Tensor> params{torch::zeros({10}), torch::zeros({3}, torch::kFloat64),
                                       torch::zeros({2, 3}, torch::kFloat16)};
  CHECK(dtbench::trainer::bucketBytes(params, {0, 1, 2}) == 40 + 24 + 12);
  CHECK(dtbench::trainer::bucketBytes(params, {}) == 0);
  CHECK_THROWS_AS(dtbench::trainer::bucketBytes(params, {3}), std::out_of_range);
}

TEST_CASE("assignBuckets rejects negative caps and undefined tensors", "[bucket_assignment]") {
  const std::vector<at::Tensor> params{floatBytes(8)};
  CHECK_THROWS_AS(assignBuckets(params, BucketLimits{-1, kMiB}), std::invalid_argument);
  CHECK_THROWS_AS(assignBuckets(params, BucketLimits{kMiB, -1}), std::invalid_argument);
  CHECK_THROWS_AS(assignBuckets({at::Tensor()}, BucketLimits{}), std::invalid_argument);
}

TEST_CASE("buckets match c10d on the parameters of the model zoo", "[bucket_assignment]") {
  const std::vector<BucketLimits> limits{
      BucketLimits{},                    // DDP's defaults: 1 MiB first, 25 MiB
      BucketLimits{kMiB, kMiB},          // --bucket-mb 1
      BucketLimits{kMiB, kMiB / 10},     // --bucket-mb 0.1
      BucketLimits{kMiB / 10, 4 * kMiB}  // a first cap below the others
  };
  for (const std::string name : {"lenet", "resnet18", "mobilenetv2", "vgg11", "densenet121"}) {
    const auto model = dtbench::models::makeModel(name);
    const std::vector<at::Tensor> params = model->module().parameters();
    for (const BucketLimits& l : limits) {
      INFO(name << " with caps " << l.firstBucketBytes << " and " << l.bucketBytes << " bytes");
      const Buckets buckets = assignBuckets(params, l);
      CHECK(coversEachIndexOnce(buckets, params.size()));
      CHECK(buckets == c10dBuckets(params, l));
    }
  }
}

TEST_CASE("buckets match c10d on random mixed dtype lists", "[bucket_assignment]") {
  std::mt19937_64 rng(12345);
  const std::vector<at::ScalarType> dtypes{torch::kFloat32, torch::kFloat64, torch::kFloat16};
  for (int trial = 0; trial < 300; ++trial) {
    const auto n = static_cast<size_t>(1 + rng() % 40);
    std::vector<at::Tensor> params;
    for (size_t i = 0; i < n; ++i) {
      const auto dtype = dtypes[rng() % (trial % 3 + 1)];  // one, two or three dtypes
      params.push_back(torch::zeros({static_cast<int64_t>(rng() % 70000)}, dtype));
    }
    const BucketLimits l{static_cast<int64_t>(rng() % 300000),
                         static_cast<int64_t>(rng() % 600000)};
    INFO("trial " << trial);
    const Buckets buckets = assignBuckets(params, l);
    CHECK(coversEachIndexOnce(buckets, params.size()));
    CHECK(buckets == c10dBuckets(params, l));
  }
}
