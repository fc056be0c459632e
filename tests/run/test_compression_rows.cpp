// Each --compress is a row (run/compression.h): the rows in --compress's order make its names and its help;
// what a bucket sends is one function, whose account of LeNet's bucket is compressed_sizes.h's worked
// example; the refusals name the setting that refuses.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/usage_error.h"
#include "run/compression.h"
#include "run/run_config.h"

using namespace dtbench;

namespace {

// LeNet's one bucket (its gradients' shapes, in bucket order) with the stop flag.
run::BucketToSend lenetBucket() {
  run::BucketToSend bucket;
  bucket.shapes = {{6, 3, 5, 5}, {6}, {16, 6, 5, 5}, {16}, {120, 400}, {120}, {84, 120}, {84}, {10, 84}, {10}};
  for (const std::vector<int64_t>& shape : bucket.shapes) {
    int64_t elements = 1;
    for (int64_t d : shape) elements *= d;
    bucket.elements += elements;
  }
  bucket.elements += 1;
  bucket.carriesFlag = true;
  return bucket;
}

int64_t bytesOf(const std::vector<run::BucketSend>& sends) {
  int64_t bytes = 0;
  for (const run::BucketSend& s : sends) bytes += s.elements * comm::bytesPerElement(s.type);
  return bytes;
}

}  // namespace

TEST_CASE("the compressions are rows, in --compress's order, and their names and help come from them",
          "[compression]") {
  std::vector<std::string> names;
  for (const run::CompressionRow& row : run::compressionRows()) {
    names.push_back(row.name);
    CHECK(&run::compressionRow(row.compression) == &row);
    CHECK(std::string(row.codec).size() > 0);
    CHECK_THAT(run::compressionHelp(), Catch::Contains(row.help));
    CHECK(run::compressionNames().parse(row.name) == row.compression);
  }
  CHECK(names == std::vector<std::string>{"none", "fp16", "bf16", "powersgd"});
  CHECK(run::compressionRow(run::RunConfig{}.sync.compress).name == std::string("none"));  // the default
  CHECK_FALSE(run::compressionRow(run::Compression::kNone).compresses);
  CHECK(run::compressionRow(run::Compression::kPowerSgd).takesRank);
  CHECK_FALSE(run::compressionRow(run::Compression::kFp16).takesRank);
  CHECK_THROWS_WITH(run::compressionNames().parse("topk"),
                    Catch::Contains("--compress") && Catch::Contains("none, fp16, bf16"));
}

TEST_CASE("what a bucket sends is one function: LeNet's bucket under every compression", "[compression]") {
  const run::BucketToSend bucket = lenetBucket();
  REQUIRE(bucket.elements == 62007);
  const auto none = run::bucketSends(run::Compression::kNone, bucket, 2);
  REQUIRE(none.size() == 1);
  CHECK(none[0].what == "gradients");
  CHECK(none[0].elements == 62007);
  CHECK(none[0].type == comm::ElementType::kFloat32);
  CHECK(bytesOf(run::bucketSends(run::Compression::kFp16, bucket, 2)) == 62007 * 2);
  CHECK(run::bucketSends(run::Compression::kBf16, bucket, 2).front().type == comm::ElementType::kBFloat16);
  // comm/compressed_sizes.h's worked example: 237 whole (biases and the flag), P 472, Q 1,658.
  const auto psgd = run::bucketSends(run::Compression::kPowerSgd, bucket, 2);
  REQUIRE(psgd.size() == 3);
  CHECK(psgd[0].what == "uncompressed");
  CHECK(psgd[0].elements == 237);
  CHECK(psgd[1].what == run::kFactorPart);
  CHECK(psgd[1].elements == 472);
  CHECK(psgd[2].what == "q");
  CHECK(psgd[2].elements == 1658);
  // A rank too high for every matrix: the bucket whole, in float32.
  const auto whole = run::bucketSends(run::Compression::kPowerSgd, bucket, 1024);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].elements == 62007);
  // none sends the bucket in its own type.
  run::BucketToSend half = bucket;
  half.type = comm::ElementType::kFloat16;
  CHECK(run::bucketSends(run::Compression::kNone, half, 2).front().type == comm::ElementType::kFloat16);
}

TEST_CASE("a compression is refused by the settings that have no all-reduce to compress", "[compression]") {
  run::RunConfig config;
  config.sync.compress = run::Compression::kFp16;
  CHECK_NOTHROW(run::checkCompression(config));
  config.sync.kind = run::Sync::kPairavg;
  CHECK_THROWS_WITH(run::checkCompression(config), Catch::Contains("--compress fp16") && Catch::Contains("--sync pairavg"));
  config.sync.kind = run::Sync::kSsgd;
  config.mode = run::ParallelMode::kDp;
  CHECK_THROWS_WITH(run::checkCompression(config), Catch::Contains("--mode dp"));
  config.mode = run::ParallelMode::kDdp;
  config.gpu.cudaGraph = true;
  CHECK_THROWS_AS(run::checkCompression(config), common::UsageError);
  config.sync.compress = run::Compression::kNone;
  CHECK_NOTHROW(run::checkCompression(config));  // none compresses nothing, so nothing refuses it
}
