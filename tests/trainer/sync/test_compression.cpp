// Gradient compression (--compress) with ranks as threads over in-process Gloo: fp16, bf16 and PowerSGD
// average a bucket identically on every rank over every topology; fp16 divides before it sums; the stop
// flag survives each; PowerSGD passes a rank-R average unchanged, keeps as residual exactly what its
// factors did not carry, and continues from saved state exactly as without the interruption.
#include "catch_torch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linalg_matrix_rank.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <torch/serialize/input-archive.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/compressed_sizes.h"
#include "comm/gloo_fixture.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology_allreduce.h"
#include "comm/traffic/traffic_recorder.h"
#include "run/compression.h"
#include "trainer/sync/bucket_compression.h"
#include "trainer/sync/compression_notice.h"
#include "trainer/sync/powersgd.h"

using namespace dtbench;
using trainer::BucketContents;
using trainer::CompressionOptions;
using run::Compression;

namespace {

constexpr int kWorld = 3;

// One bucket: a 24 x 18 matrix, a bias of 24 and a 6 x 4 x 3 x 3 convolution kernel, then the stop flag.
BucketContents testLayout() {
  BucketContents layout;
  layout.shapes = {{24, 18}, {24}, {6, 4, 3, 3}};
  layout.offsets = {0, 24 * 18, 24 * 18 + 24};
  layout.gradients = 24 * 18 + 24 + 6 * 36;
  layout.carriesFlag = true;
  return layout;
}

// Rank r's bucket content: each gradient from `fill(rank, slot, shape)`, then the rank's stop flag.
using Fill = std::function<at::Tensor(int rank, size_t slot, const std::vector<int64_t>& shape)>;

at::Tensor bucketOf(const BucketContents& layout, int rank, const Fill& fill, float flag) {
  at::Tensor flat = at::zeros({layout.gradients + 1});
  for (size_t k = 0; k < layout.shapes.size(); ++k) {
    const at::Tensor g = fill(rank, k, layout.shapes[k]).reshape({-1});
    flat.narrow(0, layout.offsets[k], g.numel()).copy_(g);
  }
  flat[layout.gradients].fill_(flag);
  return flat;
}

at::Tensor randomFill(int rank, size_t slot, const std::vector<int64_t>& shape) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(100 * rank + slot + 1);
  return at::randn(shape, generator, at::TensorOptions(at::kFloat));
}

struct RankRun {
  std::vector<at::Tensor> outputs;  // the bucket after each step
  std::vector<double> codecS;
  std::vector<int64_t> collectives;  // all-reduces issued, per step
  size_t planned = 0;                // collectives(0).size(): what a compressed step all-reduces
  std::string state;  // saveState() after the last step
};

// Every rank runs `steps` (1-based global steps) of `options` over one bucket, each step from its inputs.
std::vector<RankRun> runCompression(const CompressionOptions& options, const std::string& topology,
                                    const std::vector<int64_t>& steps, const Fill& fill,
                                    const std::vector<std::string>& loadFrom = {}, int stopRank = -1) {
  return comm::testing::runGlooRanks<RankRun>(kWorld, [&](comm::Communicator& gloo) {
    const int rank = gloo.rank();
    comm::TrafficRecorder recorder(rank, kWorld);
    comm::TopologyAllreduce allreduce(gloo, comm::Topology::parse(topology), comm::hostsFromRanksPerHost(kWorld, 2),
                                      recorder);
    const BucketContents layout = testLayout();
    auto compression = trainer::makeBucketCompression(options, gloo, allreduce, {layout}, {});
    if (!loadFrom.empty()) compression->loadState(loadFrom[static_cast<size_t>(rank)], "the test's state");
    RankRun run;
    for (int64_t step : steps) {
      at::Tensor flat = bucketOf(layout, rank, [&](int r, size_t k, const std::vector<int64_t>& shape) {
        return fill(r, k, shape) * static_cast<double>(step);
      }, rank == stopRank ? 1.0f : 0.0f);
      compression->average(0, flat, step);
      run.outputs.push_back(flat);
      run.codecS.push_back(compression->takeCodecSeconds());
      run.collectives.push_back(compression->takeCollectives());
    }
    run.planned = compression->collectives(0).size();
    run.state = compression->saveState();
    return run;
  });
}

at::Tensor exactAverage(const BucketContents& layout, const Fill& fill, double scale = 1) {
  at::Tensor sum = at::zeros({layout.gradients + 1});
  for (int r = 0; r < kWorld; ++r) sum += bucketOf(layout, r, fill, 0);
  return (sum / kWorld * scale).narrow(0, 0, layout.gradients);
}

at::Tensor readArchive(const std::string& bytes, const std::string& key) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  at::Tensor t;
  archive.read(key, t);
  return t;
}

}  // namespace

TEST_CASE("PowerSGD sends a gradient as factors only where they are at most half its size", "[compression]") {
  // PyTorch's _should_compress with min_compression_rate 2: (n + m) r 2 < n m.
  CHECK(comm::powerSgdMatrix({64, 3, 3, 3}, 2).compressed);  // 64 x 27
  CHECK(comm::powerSgdMatrix({64, 3, 3, 3}, 2).cols == 27);
  CHECK_FALSE(comm::powerSgdMatrix({64}, 2).compressed);      // a bias: a vector
  CHECK_FALSE(comm::powerSgdMatrix({4, 4}, 2).compressed);    // 32 elements of factors against 16
  CHECK(comm::powerSgdMatrix({10, 84}, 2).compressed);        // 376 < 840
  CHECK_FALSE(comm::powerSgdMatrix({10, 84}, 5).compressed);  // 940 elements of factors against 840
  CHECK(comm::powerSgdMatrix({3, 100}, 8).rank == 3);         // r = min(n, m, R)
  // What the trainer all-reduces is what predict lays out (comm::powerSgdBucketSizes).
  const BucketContents layout = testLayout();
  const comm::PowerSgdBucketSizes sizes = comm::powerSgdBucketSizes(layout.shapes, 2, /*carriesFlag=*/true);
  CHECK(sizes.uncompressed == 24 + 1);             // the bias and the flag
  CHECK(sizes.p == (24 + 6) * 2);                  // 24 x 18 and 6 x 36
  CHECK(sizes.q == (18 + 36) * 2);
  comm::testing::runGlooRanks<int>(1, [&](comm::Communicator& gloo) {
    comm::TrafficRecorder recorder(0, 1);
    comm::TopologyAllreduce allreduce(gloo, comm::Topology::parse("native"), comm::hostsFromRanksPerHost(1, 1), recorder);
    CompressionOptions options;
    options.kind = Compression::kPowerSgd;
    const auto compression = trainer::makeBucketCompression(options, gloo, allreduce, {layout}, {});
    const std::vector<trainer::BucketCollective> collectives = compression->collectives(0);
    REQUIRE(collectives.size() == 3);
    CHECK(collectives[0].elements == sizes.uncompressed);
    CHECK(collectives[1].elements == sizes.p);
    CHECK(collectives[2].elements == sizes.q);
    return 0;
  });
}

TEST_CASE("every compression's codec all-reduces what its row's bucketSends says, the account predict uses",
          "[compression]") {
  const BucketContents layout = testLayout();
  run::BucketToSend bucket;
  bucket.shapes = layout.shapes;
  bucket.elements = layout.gradients + 1;
  bucket.carriesFlag = true;
  for (const run::CompressionRow& row : run::compressionRows()) {
    INFO("--compress " << row.name << " (" << row.codec << ")");
    CompressionOptions options;
    options.kind = row.compression;
    options.start = 0;
    const std::vector<run::BucketSend> expected = run::bucketSends(row.compression, bucket, options.rank);
    const std::vector<RankRun> ranks = runCompression(options, "ring", {1, 2}, randomFill);
    for (const RankRun& rank : ranks) {
      CHECK(rank.planned == expected.size());
      CHECK(rank.collectives == std::vector<int64_t>{static_cast<int64_t>(expected.size()),
                                                     static_cast<int64_t>(expected.size())});
    }
    comm::testing::runGlooRanks<int>(1, [&](comm::Communicator& gloo) {
      comm::TrafficRecorder recorder(0, 1);
      comm::TopologyAllreduce allreduce(gloo, comm::Topology::parse("native"), comm::hostsFromRanksPerHost(1, 1),
                                        recorder);
      const auto codec = trainer::makeBucketCompression(options, gloo, allreduce, {layout}, {});
      const std::vector<trainer::BucketCollective> collectives = codec->collectives(0);
      REQUIRE(collectives.size() == expected.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        CHECK(collectives[i].what == expected[i].what);
        CHECK(collectives[i].elements == expected[i].elements);
        CHECK(collectives[i].type == expected[i].type);
      }
      return 0;
    });
  }
}

TEST_CASE("orthogonalizeColumns gives orthonormal columns (Gram-Schmidt to rank 2, QR above)", "[compression]") {
  for (int64_t r : {1, 2, 4}) {
    INFO("rank " << r);
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(7);
    const at::Tensor m = at::randn({40, r}, generator, at::TensorOptions(at::kFloat));
    trainer::orthogonalizeColumns(m);
    CHECK(at::allclose(at::mm(m.t(), m), at::eye(r), 1e-5, 1e-5));
  }
  const at::Tensor zeros = at::zeros({5, 2});
  trainer::orthogonalizeColumns(zeros);
  CHECK(at::equal(zeros, at::zeros({5, 2})));  // a column of zeros stays zero, never NaN
}

TEST_CASE("every compression averages a bucket identically on every rank, over every topology", "[compression]") {
  const BucketContents layout = testLayout();
  const at::Tensor exact = exactAverage(layout, randomFill);
  for (const Compression kind : {Compression::kNone, Compression::kFp16, Compression::kBf16, Compression::kPowerSgd}) {
    for (const std::string& topology : comm::topologyNames()) {
      INFO("--compress " << run::compressionNames().name(kind) << ", topology " << topology);
      CompressionOptions options;
      options.kind = kind;
      options.start = 0;
      const std::vector<RankRun> ranks = runCompression(options, topology, {1}, randomFill, {}, /*stopRank=*/2);
      for (int r = 0; r < kWorld; ++r) {
        INFO("rank " << r);
        const at::Tensor& out = ranks[r].outputs[0];
        CHECK(at::equal(out, ranks[0].outputs[0]));  // bit for bit the same on every rank
        CHECK(out[layout.gradients].item<float>() == 1.0f);  // one rank asked to stop
        const at::Tensor gradients = out.narrow(0, 0, layout.gradients);
        if (kind == Compression::kNone) CHECK(at::allclose(gradients, exact, 1e-5, 1e-6));
        if (kind == Compression::kFp16) CHECK(at::allclose(gradients, exact, 2e-3, 2e-3));
        if (kind == Compression::kBf16) CHECK(at::allclose(gradients, exact, 2e-2, 2e-2));
        if (kind == Compression::kPowerSgd) {
          // The bias is sent whole: exact; the matrices are approximated.
          CHECK(at::allclose(gradients.narrow(0, layout.offsets[1], 24), exact.narrow(0, layout.offsets[1], 24), 1e-5,
                             1e-6));
          CHECK_FALSE(at::allclose(gradients, exact, 1e-2, 1e-2));
        }
        if (kind == Compression::kNone) CHECK(ranks[r].codecS[0] == 0);
        else CHECK(ranks[r].codecS[0] > 0);
      }
    }
  }
}

TEST_CASE("fp16 divides by the world size before it sums, so a sum beyond float16 does not overflow", "[compression]") {
  const BucketContents layout = testLayout();
  const Fill large = [](int, size_t, const std::vector<int64_t>& shape) { return at::full(shape, 40000.0f); };
  CompressionOptions options;
  options.kind = Compression::kFp16;
  const std::vector<RankRun> ranks = runCompression(options, "ring", {1}, large);
  const at::Tensor gradients = ranks[0].outputs[0].narrow(0, 0, layout.gradients);
  CHECK(at::allclose(gradients, at::full({layout.gradients}, 40000.0f), 1e-3, 0));  // 3 x 40000 > 65504
}

TEST_CASE("PowerSGD passes a rank-R average unchanged and keeps as residual exactly what it did not send",
          "[compression]") {
  const BucketContents layout = testLayout();
  // Every rank's matrices share their column space (A Bᵣᵀ with one A of rank R): the average has rank R.
  const int64_t rankR = 2;
  const Fill lowRank = [&](int rank, size_t slot, const std::vector<int64_t>& shape) {
    if (shape.size() < 2) return randomFill(rank, slot, shape);
    int64_t cols = 1;
    for (size_t i = 1; i < shape.size(); ++i) cols *= shape[i];
    at::Generator shared = at::make_generator<at::CPUGeneratorImpl>(50 + slot);
    const at::Tensor a = at::randn({shape[0], rankR}, shared, at::TensorOptions(at::kFloat));
    return at::mm(a, randomFill(rank, slot, {cols, rankR}).t()).reshape(shape);
  };
  const at::Tensor exact = exactAverage(layout, lowRank);
  REQUIRE(at::linalg_matrix_rank(exact.narrow(0, 0, 24 * 18).view({24, 18})).item<int64_t>() == rankR);
  CompressionOptions options;
  options.kind = Compression::kPowerSgd;
  options.rank = rankR;
  options.start = 0;
  const std::vector<RankRun> ranks = runCompression(options, "ring", {1}, lowRank);
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r);
    const at::Tensor gradients = ranks[r].outputs[0].narrow(0, 0, layout.gradients);
    CHECK(at::allclose(gradients, exact, 1e-4, 1e-4));
    // The residual: this rank's input minus what came back, on the compressed gradients; 0 elsewhere.
    const at::Tensor input = bucketOf(layout, r, lowRank, 0).narrow(0, 0, layout.gradients);
    const at::Tensor residual = readArchive(ranks[r].state, "bucket0.residual");
    at::Tensor expected = input - gradients;
    expected.narrow(0, layout.offsets[1], 24).zero_();  // the bias went whole
    CHECK(at::equal(residual, expected));
  }
}

TEST_CASE("PowerSGD starts after --compress-start steps and continues exactly from its saved state",
          "[compression]") {
  CompressionOptions options;
  options.kind = Compression::kPowerSgd;
  options.start = 2;
  options.seed = 11;
  // Steps 1 and 2 are averaged uncompressed: no state yet, no encoding.
  const std::vector<RankRun> early = runCompression(options, "tree", {1, 2}, randomFill);
  CHECK(early[0].state.empty());
  CHECK(early[0].codecS[1] == 0);
  CHECK(early[0].collectives == std::vector<int64_t>{1, 1});  // the bucket whole, once a step
  CHECK(at::allclose(early[0].outputs[1].narrow(0, 0, testLayout().gradients),
                     exactAverage(testLayout(), randomFill, 2), 1e-5, 1e-6));
  // Steps 3, 4 and 5 at once, against 3 then (saved, loaded into a new object) 4 and 5.
  const std::vector<RankRun> whole = runCompression(options, "tree", {3, 4, 5}, randomFill);
  const std::vector<RankRun> first = runCompression(options, "tree", {3}, randomFill);
  std::vector<std::string> saved;
  for (const RankRun& r : first) saved.push_back(r.state);
  REQUIRE_FALSE(saved[0].empty());
  const std::vector<RankRun> rest = runCompression(options, "tree", {4, 5}, randomFill, saved);
  // A compressed step issues what collectives() lists (the uncompressed part, P, Q), counted as issued.
  REQUIRE(whole[0].planned == 3);
  CHECK(whole[0].collectives == std::vector<int64_t>{3, 3, 3});
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r);
    CHECK(at::equal(first[r].outputs[0], whole[r].outputs[0]));
    CHECK(at::equal(rest[r].outputs[0], whole[r].outputs[1]));
    CHECK(at::equal(rest[r].outputs[1], whole[r].outputs[2]));
  }
  // State that does not fit the buckets is refused by name.
  CompressionOptions rank4 = options;
  rank4.rank = 4;
  CHECK_THROWS_WITH(runCompression(rank4, "tree", {4}, randomFill, saved),
                    Catch::Contains("the test's state") && Catch::Contains("--compress-rank"));
  // Another rank's state (sync_rank files swapped) is refused by name; it would resume to another result.
  std::vector<std::string> rotated = {saved[1], saved[2], saved[0]};
  CHECK_THROWS_WITH(runCompression(options, "tree", {4}, randomFill, rotated),
                    Catch::Contains("the test's state holds rank") && Catch::Contains("PowerSGD state, not rank") &&
                        Catch::Contains("swapped"));
  // A damaged file says so, without LibTorch's C++ stack frames.
  const std::vector<std::string> damaged(kWorld, saved[0].substr(0, saved[0].size() / 2));
  CHECK_THROWS_WITH(runCompression(options, "tree", {4}, randomFill, damaged),
                    Catch::Contains("is not PowerSGD's state") && !Catch::Contains("Exception raised from") &&
                        !Catch::Contains("frame #"));
}

TEST_CASE("a run is told before it trains what its --compress will leave uncompressed", "[compression]") {
  run::RunConfig config;
  config.model = "lenet";
  config.sync.compress = Compression::kPowerSgd;
  config.sync.compressRank = 2;
  config.sync.compressStart = 2;
  const std::vector<std::vector<trainer::BucketCollective>> factors = {
      {{"uncompressed", 237, comm::ElementType::kFloat32}, {"p", 472, comm::ElementType::kFloat32},
       {"q", 1658, comm::ElementType::kFloat32}}};
  const std::vector<std::vector<trainer::BucketCollective>> whole = {{{"uncompressed", 62007, comm::ElementType::kFloat32}}};
  CHECK(trainer::compressionNotice(config, 2, factors, 10).empty());  // compresses from step 3 on
  CHECK_THAT(trainer::compressionNotice(config, 1, {}, 10), Catch::Contains("on one rank: nothing is communicated"));
  CHECK_THAT(trainer::compressionNotice(config, 2, whole, 10),
             Catch::Contains("compresses no gradient of lenet") && Catch::Contains("--compress-rank 2"));
  CHECK_THAT(trainer::compressionNotice(config, 2, factors, 2),
             Catch::Contains("all 2 steps of the run are within --compress-start 2"));
  CHECK(trainer::compressionLabel(config) == ", compress powersgd rank 2 from step 3");
  config.sync.compress = Compression::kFp16;
  CHECK(trainer::compressionNotice(config, 2, {}, 1).empty());
  CHECK_THAT(trainer::compressionNotice(config, 1, {}, 1), Catch::Contains("--compress fp16 on one rank"));
  CHECK(trainer::compressionLabel(config) == ", compress fp16");
  config.sync.compress = Compression::kNone;
  CHECK(trainer::compressionNotice(config, 1, {}, 1).empty());
  CHECK(trainer::compressionLabel(config).empty());
}
