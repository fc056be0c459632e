// The step model (experiments/predict/step_model.h) on hand-built measured steps: buckets launched
// as backward makes them ready, one communication thread, exposed communication, and the what-ifs.
#include <catch2/catch.hpp>

#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "hand_step.h"
#include "experiments/predict/step_model.h"
#include "common/usage_error.h"

#include <string>

using namespace dtbench::predict;

namespace {

// Two parameters in model order: p0 = 2 MiB, p1 = 1 MiB (float32). Visited in reverse, p1 fills the
// 1 MiB first bucket alone (bucket 0); p0 stays open (bucket 1, with the stop flag: 524289
// elements). Backward 40 ms: p1 ready at 10 ms, p0 at 30 ms. h2d 0, forward 20 ms, compute 70 ms.
MeasuredStep twoParameters() { return handMeasuredStep({{"p0", 524288, 4, 0.03}, {"p1", 262144, 4, 0.01}}); }

Hardware oneRankPerNodeHardware(double bandwidth) {
  Hardware h;
  h.ranksPerNode = 1;
  h.inter = h.intra = {bandwidth, 0};
  return h;
}

}  // namespace

TEST_CASE("Two buckets overlap backward and the second all-reduce is exposed", "[predict][step]") {
  // Ring of 2 at 1e8 B/s: bucket 0 (1 MiB) = 2 steps of 0.5 MiB = 0.01048576 s, launched at 20 + 10 ms,
  // ends 0.04048576. Bucket 1 (524289 elements; chunks of 262144 and 262145) = 2 x 1048580 / 1e8 =
  // 0.0209716 s, launched at 50 ms (idle thread), ends 0.0709716; backward ends at 60 ms.
  const StepPrediction p = predictStep(twoParameters(), oneRankPerNodeHardware(1e8), 2, {});
  REQUIRE(p.collectives.size() == 2);
  CHECK(p.collectives[0].launchS == Approx(0.03));
  CHECK(p.collectives[0].endS == Approx(0.04048576).epsilon(1e-12));
  CHECK(p.collectives[1].startS == Approx(0.05));
  CHECK(p.collectives[1].seconds == Approx(0.0209716).epsilon(1e-12));
  CHECK(p.commExposedS == Approx(0.0109716).epsilon(1e-9));
  CHECK(p.commTotalS == Approx(0.01048576 + 0.0209716).epsilon(1e-9));
  CHECK(p.stepS == Approx(0.0809716).epsilon(1e-9));
  CHECK(p.gradBytes == (262144 + 524289) * 4);
  CHECK(p.stepsPerEpoch == 50);  // 1000 samples / 2 ranks / batch 10
  CHECK(p.epochS == Approx(50 * 0.0809716).epsilon(1e-9));
}

TEST_CASE("A slow link makes bucket 1 wait for bucket 0: the thread runs one collective at a time", "[predict][step]") {
  // At 2e7 B/s bucket 0 takes 0.0524288 s (ends 0.0824288), after bucket 1's launch at 0.05.
  const StepPrediction p = predictStep(twoParameters(), oneRankPerNodeHardware(2e7), 2, {});
  CHECK(p.collectives[1].launchS == Approx(0.05));
  CHECK(p.collectives[1].startS == Approx(0.0824288).epsilon(1e-12));
  CHECK(p.collectives[1].endS == Approx(0.0824288 + 2 * 1048580 / 2e7).epsilon(1e-12));
}

TEST_CASE("What-ifs: no overlap, bucket size, element bytes, topology, world 1", "[predict][step]") {
  const MeasuredStep run = twoParameters();
  WhatIf noOverlap;
  noOverlap.overlap = false;
  // One bucket of 786433 elements launched when backward ends (60 ms): 2 x 393217 x 4 / 1e8.
  const StepPrediction fused = predictStep(run, oneRankPerNodeHardware(1e8), 2, noOverlap);
  REQUIRE(fused.collectives.size() == 1);
  CHECK(fused.commExposedS == Approx(2 * 1572868 / 1e8).epsilon(1e-12));
  WhatIf half;
  half.elementBytes = 2;  // bucket 0 now holds p1 (0.5 MiB) and p0 (1 MiB): one bucket, ready at 30 ms
  const StepPrediction fp16 = predictStep(run, oneRankPerNodeHardware(1e8), 2, half);
  CHECK(fp16.gradBytes == 786433 * 2);
  REQUIRE(fp16.collectives.size() == 1);
  CHECK(fp16.collectives[0].launchS == Approx(0.05));
  WhatIf star;
  star.topology = dtbench::comm::Topology::parse("star");
  star.segmentBytes = 0;
  CHECK(predictStep(run, oneRankPerNodeHardware(1e8), 4, star).topology.name() == "star");
  const StepPrediction one = predictStep(run, oneRankPerNodeHardware(1e8), 1, {});
  CHECK(one.collectives.empty());
  CHECK(one.stepS == Approx(0.07));
  CHECK(one.stepsPerEpoch == 100);
}

TEST_CASE("Horovod's fusion layout: one bucket while the sum stays within the threshold", "[predict][step]") {
  MeasuredStep run = twoParameters();
  WhatIf fusion;
  fusion.bucketLayout = dtbench::comm::BucketLayout::kFusion;
  // 1 MiB + 2 MiB within 25 MiB: one bucket of 786433 elements, launched when p0 is ready (20 + 30 ms),
  // where c10d's rule closes p1 alone in its 1 MiB first bucket.
  const StepPrediction one = predictStep(run, oneRankPerNodeHardware(1e8), 2, fusion);
  CHECK(one.bucketLayout == dtbench::comm::BucketLayout::kFusion);
  REQUIRE(one.collectives.size() == 1);
  CHECK(one.collectives[0].launchS == Approx(0.05));
  CHECK(one.collectives[0].seconds == Approx(2 * 1572868 / 1e8).epsilon(1e-12));
  CHECK(one.gradBytes == 786433 * 4);
  // A threshold of 2 MiB: 3 MiB do not fit, so p1 and p0 go one after the other, as c10d's buckets.
  fusion.bucketMb = 2;
  const StepPrediction two = predictStep(run, oneRankPerNodeHardware(1e8), 2, fusion);
  const StepPrediction ddp = predictStep(run, oneRankPerNodeHardware(1e8), 2, {});
  REQUIRE(two.collectives.size() == 2);
  CHECK(two.stepS == Approx(ddp.stepS).epsilon(1e-12));
  // The run's own layout applies when no what-if names one.
  run.bucketLayout = dtbench::comm::BucketLayout::kFusion;
  CHECK(predictStep(run, oneRankPerNodeHardware(1e8), 2, {}).collectives.size() == 1);
}

TEST_CASE("NCCL's native ring pays one latency per step, Gloo's a notice and its data", "[predict][step]") {
  // One tiny bucket on links of 1 ms and next to no transfer time: the latency alone. NCCL keeps its
  // receive slots posted ahead, so each of a ring's 2(N - 1) steps costs one latency; Gloo's ring
  // sends once the receiver's notice has arrived, a latency more per step after the first.
  MeasuredStep run = twoParameters();
  run.parameters = {{"p", 16, 4, 0.04}};
  Hardware h;
  h.ranksPerNode = 1;
  h.inter = h.intra = {1e15, 1e-3};
  WhatIf nccl, gloo;
  nccl.backend = dtbench::comm::Backend::kNccl;
  gloo.backend = dtbench::comm::Backend::kGloo;
  for (WhatIf* w : {&nccl, &gloo}) w->topology = dtbench::comm::Topology::parse("native");
  CHECK(predictStep(run, h, 2, nccl).collectives.at(0).seconds == Approx(2e-3).epsilon(1e-6));
  CHECK(predictStep(run, h, 4, nccl).collectives.at(0).seconds == Approx(6e-3).epsilon(1e-6));
  CHECK(predictStep(run, h, 2, gloo).collectives.at(0).seconds == Approx(3e-3).epsilon(1e-6));
  CHECK(predictStep(run, h, 4, gloo).collectives.at(0).seconds == Approx(12e-3).epsilon(1e-6));
  // dtbench's own ring over NCCL's point-to-point is the executor's walk, notices included.
  nccl.topology = dtbench::comm::Topology::parse("ring");
  CHECK(predictStep(run, h, 4, nccl).collectives.at(0).seconds == Approx(12e-3).epsilon(1e-6));
  // The buffers' broadcast is NCCL's own whatever the topology: a binomial tree of 2 rounds at 4 ranks,
  // one latency each. Gloo's pays a notice before its first round (the second's receives are posted
  // ahead, as a tree's broadcast's are).
  run.bufferElements = 1;
  run.bufferElementsKnown = true;
  const StepPrediction withBuffers = predictStep(run, h, 4, nccl);
  REQUIRE(withBuffers.collectives.at(0).name == "buffers");
  CHECK(withBuffers.collectives.at(0).seconds == Approx(2e-3).epsilon(1e-6));
  gloo.topology = dtbench::comm::Topology::parse("ring");
  CHECK(predictStep(run, h, 4, gloo).collectives.at(0).seconds == Approx(3e-3).epsilon(1e-6));
  // A pair exchange is point to point: a notice, then the data, on NCCL as on Gloo.
  nccl.topology = gloo.topology = dtbench::comm::Topology::parse("native");
  nccl.sync = gloo.sync = dtbench::run::Sync::kPairavg;
  CHECK(predictStep(run, h, 2, nccl).collectives.at(0).seconds ==
        Approx(predictStep(run, h, 2, gloo).collectives.at(0).seconds).epsilon(1e-9));
}

TEST_CASE("Native is the ring's model over the backend's efficiency", "[predict][step]") {
  MeasuredStep run = twoParameters();
  run.settings.comm.topology = dtbench::comm::Topology::parse("native");
  Hardware h = oneRankPerNodeHardware(1e8);
  h.nativeEfficiency["gloo"] = 0.5;
  const StepPrediction p = predictStep(run, h, 2, {});
  CHECK(p.collectives[0].seconds == Approx(2 * 0.01048576).epsilon(1e-12));
}

TEST_CASE("World sizes the hardware cannot hold are refused", "[predict][step]") {
  Hardware h = oneRankPerNodeHardware(1e8);
  h.ranksPerNode = 4;
  h.nodes = 2;
  CHECK_THROWS_WITH(predictStep(twoParameters(), h, 6, {}), Catch::Contains("not a multiple"));
  CHECK_THROWS_WITH(predictStep(twoParameters(), h, 12, {}), Catch::Contains("needs 3 nodes"));
  CHECK(predictStep(twoParameters(), h, 8, {}).nodes == 2);
}

TEST_CASE("The hardware file: units, defaults and refused keys", "[predict][hardware]") {
  const Hardware h = hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_node": 4,
      "intra_node": {"bandwidth_gbit_s": 80, "latency_us": 2},
      "inter_node": {"bandwidth_gbit_s": 8, "latency_us": 20}, "native_efficiency": {"mpi": 0.9}})"),
                                      "hw.json");
  CHECK(h.ranksPerNode == 4);
  CHECK(h.intra.bytesPerSecond == Approx(1e10));
  CHECK(h.inter.latencyS == Approx(2e-5));
  CHECK(h.efficiencyOf("mpi") == Approx(0.9));
  CHECK(h.efficiencyOf("gloo") == 1);
  CHECK(h.computeScale == 1);
  CHECK_THROWS_WITH(hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_node": 1, "inter_node": {}, "intra_node": {}})"),
                                     "hw.json"),
                    Catch::Contains("hw.json: intra_node.bandwidth_gbit_s is missing"));
  CHECK_THROWS_WITH(hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_nod": 1})"), "hw.json"),
                    Catch::Contains("unknown key 'ranks_per_nod'"));
  const Hardware back = hardwareFromJson(toJson(h), "again");
  CHECK(back.inter.bytesPerSecond == Approx(h.inter.bytesPerSecond));
  // Figures beyond any machine are typos; in the model they overflowed (a blank T, an unnamed exit 1).
  nlohmann::json huge = toJson(h);
  huge["compute_scale"] = 1e308;
  CHECK_THROWS_WITH(hardwareFromJson(huge, "hw.json"), Catch::Contains("hw.json: compute_scale must be a positive number, "
                                                                       "at most 1e+06"));
  huge = toJson(h);
  huge["inter_node"]["bandwidth_gbit_s"] = 1e308;
  CHECK_THROWS_WITH(hardwareFromJson(huge, "hw.json"),
                    Catch::Contains("inter_node.bandwidth_gbit_s must be a positive number, at most 1e+06"));
}

TEST_CASE("The segment across nodes is the one dtbench would take on the hardware", "[predict][hardware]") {
  // A what-if topology other than the run's (tree) over 2 nodes: the links' rate as dtbench reads it
  // sets the segment (comm::crossHostSegmentBytes: 32 KiB for a tree at 200 Mbit/s); without it, 128 KiB.
  WhatIf tree;
  tree.topology = dtbench::comm::Topology::parse("tree");
  Hardware h = oneRankPerNodeHardware(1e8);
  CHECK(predictStep(twoParameters(), h, 2, tree).segmentBytes == 128 << 10);
  h.linkRateBps = 200e6;
  CHECK(predictStep(twoParameters(), h, 2, tree).segmentBytes == 32 << 10);
  h.linkRateBps = 1e9;
  CHECK(predictStep(twoParameters(), h, 2, tree).segmentBytes == 128 << 10);
  // The run's own topology keeps the run's segment; --segment-bytes wins over both.
  CHECK(predictStep(twoParameters(), h, 2, {}).segmentBytes == 0);
  tree.segmentBytes = 4096;
  CHECK(predictStep(twoParameters(), h, 2, tree).segmentBytes == 4096);
  // Within one node no link is crossed: the topology's own default.
  Hardware fourPerNode = h;
  fourPerNode.ranksPerNode = 4;
  tree.segmentBytes.reset();
  CHECK(predictStep(twoParameters(), fourPerNode, 4, tree).segmentBytes == 1 << 20);
  // In the file: read, written back, and refused when not positive.
  const Hardware read = hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_node": 1, "link_rate_bps": 2e8,
      "intra_node": {"bandwidth_gbit_s": 1, "latency_us": 0}, "inter_node": {"bandwidth_gbit_s": 0.19, "latency_us": 0}})"),
                                         "hw.json");
  REQUIRE(read.linkRateBps);
  CHECK(*read.linkRateBps == 200e6);
  CHECK(*hardwareFromJson(toJson(read), "again").linkRateBps == 200e6);
  CHECK_FALSE(hardwareFromJson(toJson(oneRankPerNodeHardware(1e8)), "again").linkRateBps);
  CHECK_THROWS_WITH(hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_node": 1, "link_rate_bps": 0,
      "intra_node": {"bandwidth_gbit_s": 1, "latency_us": 0}, "inter_node": {"bandwidth_gbit_s": 1, "latency_us": 0}})"),
                                     "hw.json"),
                    Catch::Contains("link_rate_bps"));
}

TEST_CASE("Pair averaging swaps every parameter with one partner while backward runs", "[predict][step]") {
  // Two ranks on two nodes: one exchange of 786432 float32 each way at once, launched when backward
  // starts (20 ms): 3145728 / 1e8 = 0.03145728 s, hidden by backward (ends 60 ms); at 2e7 B/s it takes
  // 0.1572864 s and 0.1172864 s of it is exposed.
  WhatIf pairs;
  pairs.sync = dtbench::run::Sync::kPairavg;
  const StepPrediction fast = predictStep(twoParameters(), oneRankPerNodeHardware(1e8), 2, pairs);
  REQUIRE(fast.collectives.size() == 1);
  CHECK(fast.collectives[0].launchS == Approx(0.02));
  CHECK(fast.collectives[0].seconds == Approx(0.03145728).epsilon(1e-12));
  CHECK(fast.commExposedS == 0);
  const StepPrediction slow = predictStep(twoParameters(), oneRankPerNodeHardware(2e7), 2, pairs);
  CHECK(slow.commExposedS == Approx(0.1172864).epsilon(1e-9));
}

TEST_CASE("Compression: fp16 halves the same buckets, PowerSGD sends its factors, the run's own encoding is charged",
          "[predict][step]") {
  using dtbench::run::Compression;
  MeasuredStep run = twoParameters();
  run.parameters[0].shape = {512, 1024};  // p0
  run.parameters[1].shape = {256, 1024};  // p1
  // fp16: the float32 layout's two buckets (not --element-bytes 2's one), each sent in 16 bits. Ring of 2
  // at 1e8 B/s: bucket 0 = 2 steps of 131072 x 2 bytes.
  WhatIf fp16;
  fp16.compress = Compression::kFp16;
  const StepPrediction half = predictStep(run, oneRankPerNodeHardware(1e8), 2, fp16);
  REQUIRE(half.collectives.size() == 2);
  CHECK(half.gradBytes == (262144 + 524289) * 2);
  CHECK(half.uncompressedGradBytes == (262144 + 524289) * 4);
  CHECK(half.collectives[0].seconds == Approx(2 * 131072 * 2 / 1e8).epsilon(1e-12));
  CHECK_FALSE(half.codecMeasured);  // the run did not compress: its encoding is unknown, taken as 0
  CHECK(half.codecS == 0);

  // PowerSGD rank 2, the run's own with its measured 4 ms of encoding and decoding per step. Bucket 0
  // (p1, 256 x 1024): P 512 and Q 2048 elements; bucket 1 (p0, 512 x 1024, and the flag): the flag
  // alone uncompressed, P 1024, Q 2048.
  run.settings.sync.compress = Compression::kPowerSgd;
  run.settings.sync.compressRank = 2;
  run.compressS = 0.004;
  const StepPrediction psgd = predictStep(run, oneRankPerNodeHardware(1e8), 2, {});
  REQUIRE(psgd.collectives.size() == 5);
  CHECK(psgd.collectives[0].name == "bucket 0 P");
  CHECK(psgd.collectives[1].name == "bucket 0 Q");
  CHECK(psgd.collectives[2].name == "bucket 1 uncompressed");
  CHECK(psgd.gradBytes == (512 + 2048 + 1 + 1024 + 2048) * 4);
  CHECK(psgd.codecMeasured);
  // Bucket 0's share of the 4 ms by its elements (262144 of 786433), charged to its last all-reduce.
  CHECK(psgd.collectives[1].seconds == Approx(2 * 1024 * 4 / 1e8 + 0.004 * 262144 / 786433).epsilon(1e-9));
  CHECK(psgd.collectives[1].startS == Approx(psgd.collectives[0].endS));  // one after another
  // Another rank than the run measured: its encoding is not known.
  WhatIf rank4;
  rank4.compressRank = 4;
  CHECK_FALSE(predictStep(run, oneRankPerNodeHardware(1e8), 2, rank4).codecMeasured);
  // A gradient without its shape cannot be laid out as factors: refused, naming it.
  run.parameters[0].shape.clear();
  CHECK_THROWS_WITH(predictStep(run, oneRankPerNodeHardware(1e8), 2, {}), Catch::Contains("p0") && Catch::Contains("shape"));
  WhatIf both;
  both.compress = Compression::kFp16;
  both.elementBytes = 2;
  CHECK_THROWS_AS(predictStep(twoParameters(), oneRankPerNodeHardware(1e8), 2, both), dtbench::common::UsageError);
}
