// What the collective library and the framework add (experiments/predict/collective_library.h,
// control_plane.h): NCCL's choice between ring and tree against hand-computed costs, Horovod's cycle
// wait by hand, the control term of the limits table, files without the rows, and bad rows refused.
#include <catch2/catch.hpp>

#include "common/usage_error.h"
#include "experiments/predict/collective_library.h"
#include "experiments/predict/control_plane.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/scaling_limits.h"
#include "experiments/predict/step_model.h"
#include "hand_step.h"

#include <string>

using namespace dtbench::predict;

namespace {

// NCCL's native all-reduce over one rank per node: links of 1e9 B/s and 20 us, both classes.
Hardware cpNcclHardware() {
  Hardware h;
  h.ranksPerNode = 1;
  h.intra = h.inter = {1e9, 20e-6};
  h.nativeEfficiency["nccl"] = 1.0;
  return h;
}

WhatIf cpNative() {
  WhatIf w;
  w.backend = dtbench::comm::Backend::kNccl;
  w.topology = dtbench::comm::Topology::parse("native");
  return w;
}

// 1,000 float32 elements ready at backward's end (40 ms into it): one bucket of 1,001 elements (the
// stop flag), 4,004 bytes, launched when backward ends at 60 ms.
MeasuredStep cpTinyStep() { return handMeasuredStep({{"w", 1000, 4, 0.04, {}}}); }

Hardware cpParse(const std::string& text) { return hardwareFromJson(nlohmann::json::parse(text), "hw.json"); }

const std::string cpLinks = R"("ranks_per_node": 1, "intra_node": {"bandwidth_gbit_s": 8, "latency_us": 20},
                                 "inter_node": {"bandwidth_gbit_s": 8, "latency_us": 20})";

std::string cpUsageError(const std::string& text) {
  try {
    cpParse(text);
  } catch (const dtbench::common::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("NCCL's tree cost is its cost model's, by hand", "[predict][control]") {
  // 1 MiB over 32 ranks, 4 a node (8 nodes), bus 1e9 B/s: latency 2 x (3 x 4.0 + log2(8) x 14.0) us
  // = 108 us; bytes: 1048576 >> 6 = 2^14, correction 0.5, so 1048576 / (1e9 x 0.92 x 0.5 x 0.5).
  const TreeCost c = ncclTreeCost(1 << 20, 32, 4, 1e9);
  CHECK(c.latencyS == Approx(108e-6).epsilon(1e-12));
  CHECK(c.bandwidthS == Approx(1048576 / 0.23e9).epsilon(1e-12));
  // floor(log2(nodes)): 12 nodes are 3 levels, as 8 are.
  CHECK(ncclTreeCost(64, 48, 4, 1e9).latencyS == Approx(108e-6).epsilon(1e-12));
  // One node: its chain of R - 1 hops each way.
  CHECK(ncclTreeCost(64, 8, 8, 1e9).latencyS == Approx(2 * 7 * 4e-6).epsilon(1e-12));
  // The correction table's ends: below 64 bytes and from 512 MiB, none.
  CHECK(ncclTreeCorrection(63) == 1.0);
  CHECK(ncclTreeCorrection(64) == Approx(0.9));
  CHECK(ncclTreeCorrection(4004) == Approx(0.9));           // 62 -> index 5
  CHECK(ncclTreeCorrection(64 << 11) == Approx(0.5));      // index 11
  CHECK(ncclTreeCorrection((int64_t{1} << 29) - 1) == Approx(0.9));
  CHECK(ncclTreeCorrection(int64_t{1} << 29) == 1.0);
}

TEST_CASE("The library charges the ring at small N and large buckets, the tree where cheaper, the ring before 2.4",
          "[predict][control]") {
  const Hardware plain = cpNcclHardware();
  Hardware nccl228 = plain, nccl21 = plain;
  nccl228.collectiveLibrary = CollectiveLibrary{};  // 2.28
  nccl21.collectiveLibrary = CollectiveLibrary{"nccl", 2, 1, "2.1"};
  CHECK(nccl228.collectiveLibrary->hasTree());
  CHECK_FALSE(nccl21.collectiveLibrary->hasTree());

  // 64 ranks, one a node, a 4,004-byte bucket: the ring pays at least 2 x 63 latencies of 20 us
  // (2.52 ms); the tree 2 x log2(64) x 14 us = 168 us and 4004 / (1e9 x 0.92 x 0.5 x 0.9) for its bytes.
  const MeasuredStep tiny = cpTinyStep();
  const StepPrediction ring = predictStep(tiny, plain, 64, cpNative());
  const StepPrediction tree = predictStep(tiny, nccl228, 64, cpNative());
  REQUIRE(ring.collectives.size() == 1);
  REQUIRE(tree.collectives.size() == 1);
  CHECK(ring.collectives[0].seconds >= 2 * 63 * 20e-6);
  const double treeLatency = 168e-6, treeBytes = 4004 / (1e9 * 0.92 * 0.5 * 0.9);
  CHECK(tree.collectives[0].name == "bucket 0 (tree)");
  CHECK(tree.collectives[0].latencyS == Approx(treeLatency).epsilon(1e-12));
  CHECK(tree.collectives[0].bandwidthS == Approx(treeBytes).epsilon(1e-12));
  CHECK(tree.collectives[0].seconds == Approx(treeLatency + treeBytes).epsilon(1e-12));
  CHECK(tree.commExposedS == Approx(treeLatency + treeBytes).epsilon(1e-12));  // launched when backward ends
  CHECK(tree.treeCollectives == 1);
  CHECK(tree.ringCollectives == 0);
  CHECK(tree.stepS == Approx(0.07 + treeLatency + treeBytes).epsilon(1e-12));

  // NCCL 2.1 has no tree: the ring, as the model always charged it.
  const StepPrediction old = predictStep(tiny, nccl21, 64, cpNative());
  CHECK(old.collectives[0].name == "bucket 0 (ring)");
  CHECK(old.collectives[0].seconds == ring.collectives[0].seconds);
  CHECK(old.stepS == ring.stepS);
  CHECK(old.ringCollectives == 1);

  // Two ranks and a 1 MiB bucket (the first of handMeasuredStep's two parameters' buckets): the ring
  // moves 1 MiB once over 1e8 B/s (10.5 ms), the tree 2 MiB at 0.92 x 0.5 (correction for 1 MiB) of it
  // (45.6 ms): the ring, charged as without the library.
  Hardware slow228 = nccl228, slowPlain = plain;
  slow228.intra = slow228.inter = slowPlain.intra = slowPlain.inter = {1e8, 20e-6};
  const MeasuredStep two = handMeasuredStep({{"p0", 524288, 4, 0.03, {}}, {"p1", 262144, 4, 0.01, {}}});
  const StepPrediction small = predictStep(two, slow228, 2, cpNative());
  const StepPrediction smallPlain = predictStep(two, slowPlain, 2, cpNative());
  REQUIRE(small.collectives.size() == 2);
  CHECK(small.collectives[0].name == "bucket 0 (ring)");
  CHECK(small.collectives[1].name == "bucket 1 (ring)");
  CHECK(ncclTreeCost(1 << 20, 2, 1, 1e8).seconds() > small.collectives[0].seconds);
  for (size_t k = 0; k < 2; ++k) CHECK(small.collectives[k].seconds == smallPlain.collectives[k].seconds);
  CHECK(small.stepS == smallPlain.stepS);

  // The library is NCCL's: a what-if on gloo, or dtbench's own ring on nccl, is charged as before.
  WhatIf gloo = cpNative();
  gloo.backend = dtbench::comm::Backend::kGloo;
  CHECK(predictStep(tiny, nccl228, 64, gloo).stepS == predictStep(tiny, plain, 64, gloo).stepS);
  WhatIf ownRing = cpNative();
  ownRing.topology = dtbench::comm::Topology::parse("ring");
  const StepPrediction own = predictStep(tiny, nccl228, 64, ownRing);
  CHECK_FALSE(own.libraryApplied);
  CHECK(own.collectives[0].name == "bucket 0");
  CHECK(own.stepS == predictStep(tiny, plain, 64, ownRing).stepS);

  // The limits table names the algorithm picked at each N.
  const dtbench::report::Table t = limitsTable({small, tree}, predictStep(tiny, nccl228, 1, cpNative()));
  bool named = false;
  for (const std::string& note : t.notes)
    named = named || note.find("N=2 ring; N=64 tree.") != std::string::npos;
  CHECK(named);
}

TEST_CASE("Horovod's cycle: each launch waits half a cycle, and the wait after backward is the control term",
          "[predict][control]") {
  // One bucket ready when backward ends (60 ms). Without a framework it starts then and the exposed
  // communication is its all-reduce, d. With a 10 ms cycle it launches 5 ms later: 5 ms of control.
  const MeasuredStep tiny = cpTinyStep();
  const Hardware plain = cpNcclHardware();
  Hardware horovod = plain;
  horovod.framework = ControlPlane{"horovod", "pre-0.21", 0.010, 64, "rank0"};
  const StepPrediction before = predictStep(tiny, plain, 2, cpNative());
  const StepPrediction p = predictStep(tiny, horovod, 2, cpNative());
  REQUIRE(p.collectives.size() == 1);
  const double d = before.collectives[0].seconds;
  CHECK(before.commExposedS == Approx(d).epsilon(1e-12));
  CHECK(before.exposedControlS == 0);
  CHECK(p.launchWaitS == Approx(0.005));
  CHECK(p.collectives[0].launchS == Approx(0.065).epsilon(1e-12));
  CHECK(p.collectives[0].seconds == d);
  CHECK(p.exposedControlS == Approx(0.005).epsilon(1e-12));
  CHECK(p.commExposedS == Approx(0.005 + d).epsilon(1e-12));
  CHECK(p.stepS == Approx(before.stepS + 0.005).epsilon(1e-12));

  // The limits table: control 5 ms, and the terms still add up to the step exactly.
  const StepPrediction one = predictStep(tiny, horovod, 1, cpNative());
  const dtbench::report::Table t = limitsTable({one, p}, one);
  const StepTerms terms = stepTerms(p);
  CHECK(terms.controlS == Approx(0.005).epsilon(1e-12));
  CHECK(terms.sumS() == Approx(p.stepS).epsilon(1e-12));
  CHECK(terms.bandwidthS + terms.latencyS + terms.codecS + terms.controlS == Approx(p.commExposedS).epsilon(1e-12));
  size_t control = 0;
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == "control_s") control = i;
  REQUIRE(control > 0);
  CHECK(t.rows[0][control].value == 0);  // one rank: nothing to launch
  CHECK(t.rows[1][control].value == Approx(0.005).margin(1e-6));
  bool said = false;
  for (const std::string& note : t.notes)
    said = said || note.find("not charged: no cited per-rank cost") != std::string::npos;
  CHECK(said);

  // A wait that ends before backward does is hidden: the fusion buffer (64 MiB) holds both gradients of
  // the two-parameter step in one bucket, ready 30 ms into backward (50 ms), launched at 55 ms.
  const MeasuredStep two = handMeasuredStep({{"p0", 524288, 4, 0.03, {}}, {"p1", 262144, 4, 0.01, {}}});
  const StepPrediction fused = predictStep(two, horovod, 2, cpNative());
  CHECK(fused.bucketLayout == dtbench::comm::BucketLayout::kFusion);
  CHECK(fused.bucketMb == 64);
  REQUIRE(fused.collectives.size() == 1);
  CHECK(fused.collectives[0].launchS == Approx(0.055).epsilon(1e-12));
  CHECK(fused.exposedControlS == 0);
  CHECK(stepTerms(fused).sumS() == Approx(fused.stepS).epsilon(1e-12));
  // On links of 1e8 B/s the same bucket (3 MiB and the stop flag, about 31.5 ms) runs past backward's end
  // either way: its 5 ms later launch ends it 5 ms later, all of it control; the other terms are the step's
  // without the wait.
  Hardware slow = horovod, slowPlain = plain;
  slow.intra = slow.inter = slowPlain.intra = slowPlain.inter = {1e8, 20e-6};
  WhatIf fusion = cpNative();
  fusion.bucketLayout = dtbench::comm::BucketLayout::kFusion;
  fusion.bucketMb = 64;
  const StepPrediction late = predictStep(two, slow, 2, cpNative());
  const StepPrediction early = predictStep(two, slowPlain, 2, fusion);
  REQUIRE(early.collectives.size() == 1);
  CHECK(early.collectives[0].endS > 0.06 + 0.005);
  CHECK(late.exposedControlS == Approx(0.005).epsilon(1e-9));
  CHECK(late.stepS == Approx(early.stepS + 0.005).epsilon(1e-12));
  CHECK(late.exposedBandwidthS == early.exposedBandwidthS);
  CHECK(late.exposedLatencyS == early.exposedLatencyS);
  CHECK(stepTerms(late).sumS() == Approx(late.stepS).epsilon(1e-12));
  // A what-if layout wins over the framework's: c10d's two buckets, 1 MiB first.
  WhatIf ddp = cpNative();
  ddp.bucketLayout = dtbench::comm::BucketLayout::kDdp;
  ddp.bucketMb = 25;
  CHECK(predictStep(two, horovod, 2, ddp).collectives.size() == 2);
}

TEST_CASE("A file without the rows predicts as before, and ddp and a ring-only NCCL add nothing", "[predict][control]") {
  const Hardware bare = cpParse("{" + cpLinks + "}");
  CHECK_FALSE(bare.collectiveLibrary);
  CHECK_FALSE(bare.framework);
  CHECK_FALSE(toJson(bare).contains("collective_library"));
  CHECK_FALSE(toJson(bare).contains("framework"));
  const Hardware rows = cpParse("{" + cpLinks + R"(, "collective_library": {"name": "nccl", "release": "2.1"},
                                                    "framework": {"name": "ddp"}})");
  REQUIRE(rows.collectiveLibrary);
  CHECK(rows.collectiveLibrary->release == "2.1");
  REQUIRE(rows.framework);
  CHECK(rows.framework->launchWaitS() == 0);
  const MeasuredStep two = handMeasuredStep({{"p0", 524288, 4, 0.03, {}}, {"p1", 262144, 4, 0.01, {}}});
  for (int world : {2, 8, 64}) {
    INFO("N = " << world);
    const StepPrediction a = predictStep(two, bare, world, cpNative());
    const StepPrediction b = predictStep(two, rows, world, cpNative());
    CHECK(a.stepS == b.stepS);
    CHECK(a.commExposedS == b.commExposedS);
    CHECK(a.bucketLayout == b.bucketLayout);
    REQUIRE(a.collectives.size() == b.collectives.size());
    for (size_t k = 0; k < a.collectives.size(); ++k) {
      CHECK(a.collectives[k].name == "bucket " + std::to_string(k));
      CHECK(b.collectives[k].name == a.collectives[k].name + " (ring)");
      CHECK(a.collectives[k].endS == b.collectives[k].endS);
    }
    CHECK(stepTerms(a).controlS == 0);
  }
  // Written back, the rows read back the same.
  const Hardware horovod = cpParse("{" + cpLinks + R"(, "collective_library": {"name": "nccl", "release": "2.28"},
      "framework": {"name": "horovod", "release": "pre-0.21", "cycle_ms": 5, "fusion_mb": 64, "negotiation": "rank0"}})");
  const Hardware back = hardwareFromJson(toJson(horovod), "again");
  REQUIRE(back.framework);
  CHECK(back.framework->cycleS == Approx(0.005));
  CHECK(back.framework->fusionMb == 64);
  CHECK(back.framework->negotiation == "rank0");
  REQUIRE(back.collectiveLibrary);
  CHECK(back.collectiveLibrary->release == "2.28");
}

TEST_CASE("Bad collective library and framework rows are refused, naming the key", "[predict][control]") {
  const auto with = [](const std::string& rows) { return "{" + cpLinks + ", " + rows + "}"; };
  CHECK_THAT(cpUsageError(with(R"("collective_library": {"name": "gloo", "release": "2.28"})")),
             Catch::Contains("hw.json: collective_library.name must be nccl"));
  CHECK_THAT(cpUsageError(with(R"("collective_library": {"name": "nccl", "release": "2.10"})")),
             Catch::Contains("collective_library.release '2.10'"));
  CHECK_THAT(cpUsageError(with(R"("collective_library": {"name": "nccl", "release": "two"})")),
             Catch::Contains("collective_library.release must be MAJOR.MINOR"));
  CHECK_THAT(cpUsageError(with(R"("collective_library": {"name": "nccl"})")),
             Catch::Contains("collective_library.release is missing"));
  CHECK_THAT(cpUsageError(with(R"("collective_library": {"name": "nccl", "release": "2.28", "algo": "tree"})")),
             Catch::Contains("unknown key 'collective_library.algo'"));
  CHECK_THAT(cpUsageError(with(R"("collective_library": "nccl")")), Catch::Contains("collective_library must be an object"));
  CHECK_THAT(cpUsageError(with(R"("framework": {"name": "deepspeed"})")),
             Catch::Contains("framework.name must be ddp or horovod"));
  CHECK_THAT(cpUsageError(with(R"("framework": {"name": "ddp", "cycle_ms": 5})")),
             Catch::Contains("unknown key 'framework.cycle_ms'"));
  CHECK_THAT(cpUsageError(with(R"("framework": {"name": "horovod", "release": "0.16", "cycle_ms": -5, "fusion_mb": 64,
                                                "negotiation": "rank0"})")),
             Catch::Contains("framework.cycle_ms must be a positive number"));
  CHECK_THAT(cpUsageError(with(R"("framework": {"name": "horovod", "release": "0.16", "cycle_ms": 5,
                                                "negotiation": "rank0"})")),
             Catch::Contains("framework.fusion_mb is missing"));
  CHECK_THAT(cpUsageError(with(R"("framework": {"name": "horovod", "release": "0.16", "cycle_ms": 5, "fusion_mb": 64,
                                                "negotiation": "allgather"})")),
             Catch::Contains("framework.negotiation must be rank0"));
}
