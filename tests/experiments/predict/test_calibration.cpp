// Calibration (experiments/predict/calibration.h): known latency and bandwidth recovered from
// synthetic measurements made by the model itself, and the native efficiency from native rows.
#include <catch2/catch.hpp>

#include "experiments/predict/calibration.h"

#include <string>
#include <vector>

using namespace dtbench::predict;

namespace {

std::vector<AllreduceMeasurement> synthetic(const Hardware& truth, int ranksPerNode, double nativeEfficiency) {
  std::vector<AllreduceMeasurement> rows;
  for (const std::string topology : {"ring", "tree", "star", "native"})
    for (int nodes : {1, 2, 3, 4})
      for (int64_t bytes = 65536; bytes <= (16 << 20); bytes *= 4) {
        AllreduceMeasurement m;
        m.source = "synthetic";
        m.backend = "gloo";
        m.topology = topology;
        m.type = "float32";
        m.nodes = nodes;
        m.world = nodes * ranksPerNode;
        if (m.world < 2) continue;
        m.bytes = bytes;
        m.segmentBytes = topology == "ring" ? 0 : 1 << 20;
        Hardware h = truth;
        h.nativeEfficiency["gloo"] = nativeEfficiency;
        m.seconds = modelledSeconds(m, h);
        rows.push_back(m);
      }
  return rows;
}

}  // namespace

TEST_CASE("Calibration recovers the links' latency and bandwidth and the native efficiency", "[predict][calibration]") {
  Hardware truth;
  truth.ranksPerNode = 2;
  truth.intra = {2.5e9, 4e-6};
  truth.inter = {1.2e8, 35e-6};
  const Calibration fit = calibrate(synthetic(truth, 2, 0.8));
  CHECK(fit.hardware.intra.bytesPerSecond == Approx(2.5e9).epsilon(0.01));
  CHECK(fit.hardware.intra.latencyS == Approx(4e-6).epsilon(0.02));
  CHECK(fit.hardware.inter.bytesPerSecond == Approx(1.2e8).epsilon(0.01));
  CHECK(fit.hardware.inter.latencyS == Approx(35e-6).epsilon(0.02));
  CHECK(fit.hardware.efficiencyOf("gloo") == Approx(0.8).epsilon(0.01));
  CHECK(fit.hardware.ranksPerNode == 2);
  CHECK(fit.interRmsLog < 1e-3);
  for (const CalibrationRow& r : fit.rows) CHECK(r.predictedS == Approx(r.measured.seconds).epsilon(0.02));
}

TEST_CASE("Calibration with one rank per node needs no intra-node rows", "[predict][calibration]") {
  Hardware truth;
  truth.inter = truth.intra = {6e7, 80e-6};
  std::vector<AllreduceMeasurement> rows;
  for (const AllreduceMeasurement& r : synthetic(truth, 1, 1.0))
    if (r.nodes > 1) rows.push_back(r);
  const Calibration fit = calibrate(rows);
  CHECK(fit.hardware.inter.bytesPerSecond == Approx(6e7).epsilon(0.01));
  CHECK(fit.hardware.inter.latencyS == Approx(80e-6).epsilon(0.02));
}

TEST_CASE("Calibration keeps the links' rate dtbench read when every row across nodes has one", "[predict][calibration]") {
  Hardware truth;
  truth.inter = truth.intra = {6e7, 80e-6};
  std::vector<AllreduceMeasurement> rows;
  for (AllreduceMeasurement r : synthetic(truth, 1, 1.0))
    if (r.nodes > 1) {
      r.linkRateBps = 5e8;
      rows.push_back(r);
    }
  CHECK(calibrate(rows).hardware.linkRateBps == 5e8);
  rows.back().linkRateBps = 1e9;  // two rates: none is the hardware's
  CHECK_FALSE(calibrate(rows).hardware.linkRateBps);
  rows.back().linkRateBps.reset();  // a row off the cluster: none either
  CHECK_FALSE(calibrate(rows).hardware.linkRateBps);
}

TEST_CASE("Calibration refuses what it cannot fit", "[predict][calibration]") {
  AllreduceMeasurement one;
  one.world = 1;
  one.bytes = 1024;
  one.seconds = 1e-5;
  one.topology = "ring";
  CHECK_THROWS_WITH(calibrate({one}), Catch::Contains("no row of a point-to-point topology"));
  Hardware truth;
  truth.inter = truth.intra = {6e7, 80e-6};
  std::vector<AllreduceMeasurement> rows;
  for (const AllreduceMeasurement& r : synthetic(truth, 2, 1.0))
    if (r.nodes > 1) rows.push_back(r);
  CHECK_THROWS_WITH(calibrate(rows), Catch::Contains("no row over one node"));
}
