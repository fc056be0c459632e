// The gradient buckets' layout as data (comm/bucket_layout.h), without LibTorch: the header's worked
// examples, buckets per key, the order of buckets left open, Horovod's fusion rule, and the errors. trainer::assignBuckets,
// which delegates here, is checked against c10d in tests/trainer/sync/test_bucket_assignment.cpp.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/bucket_layout.h"

using dtbench::comm::assignBucketsByFusion;
using dtbench::comm::assignBucketsBySize;
using dtbench::comm::BucketLayout;
using dtbench::comm::bucketLayoutNames;
using dtbench::comm::BucketTensor;
using Buckets = std::vector<std::vector<size_t>>;

namespace {

constexpr int64_t kMiB = 1 << 20;

}  // namespace

TEST_CASE("the worked example: the first bucket closes at its cap, later ones at the other", "[bucket_layout]") {
  const std::vector<BucketTensor> tensors{{kMiB / 2}, {3 * kMiB}, {kMiB / 2}, {2 * kMiB}, {kMiB / 4}, {kMiB}};
  CHECK(assignBucketsBySize(tensors, kMiB, 4 * kMiB) == Buckets{{5}, {4, 3, 2, 1}, {0}});
}

TEST_CASE("a bucket takes the tensor that makes it reach its cap, and closes at the cap exactly", "[bucket_layout]") {
  CHECK(assignBucketsBySize({{kMiB / 2}, {kMiB / 2}, {3 * kMiB / 4}}, kMiB, 25 * kMiB) == Buckets{{2, 1}, {0}});
  CHECK(assignBucketsBySize({{kMiB / 4}, {kMiB / 4}, {3 * kMiB / 4}}, kMiB, 25 * kMiB) == Buckets{{2, 1}, {0}});
  // Larger than the cap, after a closed bucket: a bucket of its own.
  CHECK(assignBucketsBySize({{kMiB / 8}, {30 * kMiB}, {2 * kMiB}, {kMiB / 8}}, kMiB, 25 * kMiB) ==
        Buckets{{3, 2}, {1}, {0}});
}

TEST_CASE("two keys have a bucket and a cap progression each", "[bucket_layout]") {
  // Key 1 (say float64) closes at its first cap of 1 MiB; key 0, closing later, still at its own
  // first cap, not at 25 MiB.
  const std::vector<BucketTensor> tensors{{kMiB / 2, 0}, {kMiB / 2, 1}, {kMiB / 2, 0}, {kMiB / 2, 1}, {kMiB / 4, 0}};
  CHECK(assignBucketsBySize(tensors, kMiB, 25 * kMiB) == Buckets{{3, 1}, {4, 2, 0}});
}

TEST_CASE("buckets left open follow in reverse order of the first visit to their key", "[bucket_layout]") {
  // Visit order 3 (key 7), 2 (key -3), 1 (key 7), 0 (key 2): nothing reaches a cap. The keys'
  // values play no part, only when each is first visited.
  const std::vector<BucketTensor> tensors{{8, 2}, {64, 7}, {64, -3}, {64, 7}};
  CHECK(assignBucketsBySize(tensors, kMiB, 25 * kMiB) == Buckets{{0}, {2}, {3, 1}});
}

TEST_CASE("no tensors give no buckets and zero caps a bucket per tensor", "[bucket_layout]") {
  CHECK(assignBucketsBySize({}, kMiB, 25 * kMiB).empty());
  CHECK(assignBucketsBySize({{8}, {4}, {12}}, 0, 0) == Buckets{{2}, {1}, {0}});
  CHECK(assignBucketsBySize({{0}, {0}}, 0, 0) == Buckets{{1}, {0}});  // 0 bytes reach a cap of 0
}

TEST_CASE("negative caps and sizes are refused", "[bucket_layout]") {
  CHECK_THROWS_AS(assignBucketsBySize({{8}}, -1, kMiB), std::invalid_argument);
  CHECK_THROWS_AS(assignBucketsBySize({{8}}, kMiB, -1), std::invalid_argument);
  CHECK_THROWS_AS(assignBucketsBySize({{8}, {-4}}, kMiB, kMiB), std::invalid_argument);
}

TEST_CASE("fusion: the worked example fills a bucket up to the threshold and never past it", "[bucket_layout]") {
  const std::vector<BucketTensor> tensors{{kMiB / 2}, {3 * kMiB}, {kMiB / 2}, {2 * kMiB}, {kMiB / 4}, {kMiB}};
  CHECK(assignBucketsByFusion(tensors, 4 * kMiB) == Buckets{{5, 4, 3, 2}, {1, 0}});
}

TEST_CASE("fusion: a sum equal to the threshold fits, one byte more starts the next bucket", "[bucket_layout]") {
  CHECK(assignBucketsByFusion({{kMiB}, {3 * kMiB}}, 4 * kMiB) == Buckets{{1, 0}});
  CHECK(assignBucketsByFusion({{kMiB + 1}, {3 * kMiB}}, 4 * kMiB) == Buckets{{1}, {0}});
}

TEST_CASE("fusion: a tensor larger than the threshold is a bucket of its own, and nothing is skipped",
          "[bucket_layout]") {
  // Visit order: 16 KiB, 16 MiB, 16 KiB, 64 MiB (the threshold exactly), 16 KiB, 392 MiB, then 36 and
  // 20 MiB: VGG-16's classifier (bias before weight) and its convolutions at a threshold of 64 MiB.
  const std::vector<BucketTensor> tensors{{20 * kMiB}, {36 * kMiB}, {392 * kMiB}, {16 << 10},
                                          {64 * kMiB}, {16 << 10},  {16 * kMiB},  {16 << 10}};
  CHECK(assignBucketsByFusion(tensors, 64 * kMiB) == Buckets{{7, 6, 5}, {4}, {3}, {2}, {1, 0}});
  // c10d's rule closes a bucket once it reaches the cap, so the large tensors take their neighbours.
  CHECK(assignBucketsBySize(tensors, kMiB, 64 * kMiB) == Buckets{{7, 6}, {5, 4}, {3, 2}, {1, 0}});
}

TEST_CASE("fusion: a change of key starts the next bucket even below the threshold", "[bucket_layout]") {
  const std::vector<BucketTensor> tensors{{8, 0}, {8, 0}, {8, 1}, {8, 0}};
  CHECK(assignBucketsByFusion(tensors, kMiB) == Buckets{{3}, {2}, {1, 0}});
}

TEST_CASE("fusion: no tensors give no buckets, a zero threshold a bucket per tensor, and negatives are refused",
          "[bucket_layout]") {
  CHECK(assignBucketsByFusion({}, kMiB).empty());
  CHECK(assignBucketsByFusion({{8}, {4}, {12}}, 0) == Buckets{{2}, {1}, {0}});
  CHECK(assignBucketsByFusion({{0}, {0}}, 0) == Buckets{{1, 0}});  // 0 + 0 bytes stay within 0
  CHECK_THROWS_AS(assignBucketsByFusion({{8}}, -1), std::invalid_argument);
  CHECK_THROWS_AS(assignBucketsByFusion({{8}, {-4}}, kMiB), std::invalid_argument);
}

TEST_CASE("bucket layouts have names for the command line and the step description", "[bucket_layout]") {
  CHECK(bucketLayoutNames().parse("ddp") == BucketLayout::kDdp);
  CHECK(bucketLayoutNames().parse("fusion") == BucketLayout::kFusion);
  CHECK(std::string(bucketLayoutNames().name(BucketLayout::kFusion)) == "fusion");
  CHECK_THROWS_WITH(bucketLayoutNames().parse("horovod"),
                    "unknown bucket layout 'horovod' (--bucket-layout); valid bucket layouts: ddp, fusion");
}
