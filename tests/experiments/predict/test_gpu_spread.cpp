// A fleet's static per-GPU spread (experiments/predict/gpu_spread.h): the expected largest of N standard
// normals against known values, the hardware file's gpu_spread row read and refused by key, the straggler
// term it adds on top of the measured spread worked by hand, and a file without the row predicting exactly as
// before.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "experiments/predict/gpu_spread.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/prediction_band.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/step_model.h"
#include "hand_step.h"

using namespace dtbench::predict;

namespace {

const double kFleetPi = std::acos(-1.0);

nlohmann::json fleetHardwareJson() {
  return nlohmann::json::parse(R"({"ranks_per_node": 1, "intra_node": {"bandwidth_gbit_s": 0.8, "latency_us": 0},
      "inter_node": {"bandwidth_gbit_s": 0.8, "latency_us": 0, "message_overhead_us": 0}})");
}

Hardware fleetHardware(double cv) {
  nlohmann::json json = fleetHardwareJson();
  json["gpu_spread"] = {{"cv", cv}, {"source", "a test's figure"}};
  return hardwareFromJson(json, "fleet.json");
}

std::string gpuSpreadRefusal(const nlohmann::json& row) {
  nlohmann::json json = fleetHardwareJson();
  json["gpu_spread"] = row;
  try {
    hardwareFromJson(json, "fleet.json");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("The expected largest of N standard normals", "[predict][fleet]") {
  CHECK(expectedMaxOfNormals(1) == 0);
  CHECK(expectedMaxOfNormals(2) == Approx(1 / std::sqrt(kFleetPi)).epsilon(1e-7));
  CHECK(expectedMaxOfNormals(3) == Approx(1.5 / std::sqrt(kFleetPi)).epsilon(1e-7));
  CHECK(expectedMaxOfNormals(4) == Approx(1.0293754).epsilon(1e-6));
  CHECK(expectedMaxOfNormals(5) == Approx(1.1629645).epsilon(1e-6));
  CHECK(expectedMaxOfNormals(10) == Approx(1.5387527).epsilon(1e-6));
  CHECK(expectedMaxOfNormals(100) == Approx(2.5075937).epsilon(1e-6));
  // The issue's figures: about 2.6 at 128 and 3.0 at 512; growing without bound, slowly.
  CHECK(expectedMaxOfNormals(128) == Approx(2.6).margin(0.02));
  CHECK(expectedMaxOfNormals(512) == Approx(3.04).margin(0.02));
  CHECK(expectedMaxOfNormals(65536) > expectedMaxOfNormals(4096));
  CHECK(expectedMaxOfNormals(65536) < 4.5);
}

TEST_CASE("The hardware file's gpu_spread row: read, written back, refused by key", "[predict][fleet]") {
  const Hardware h = fleetHardware(0.08);
  REQUIRE(h.gpuSpread);
  CHECK(h.gpuSpread->cv == 0.08);
  CHECK(h.gpuSpread->source == "a test's figure");
  CHECK(hardwareFromJson(toJson(h), "again.json").gpuSpread->cv == 0.08);
  CHECK_FALSE(hardwareFromJson(fleetHardwareJson(), "plain.json").gpuSpread);
  CHECK_FALSE(toJson(hardwareFromJson(fleetHardwareJson(), "plain.json")).contains("gpu_spread"));
  CHECK_THAT(gpuSpreadRefusal(0.08), Catch::Contains("fleet.json") && Catch::Contains("gpu_spread must be an object"));
  CHECK_THAT(gpuSpreadRefusal({{"source", "x"}}), Catch::Contains("gpu_spread.cv is missing"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", 0.08}}), Catch::Contains("gpu_spread.source is missing"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", 0.08}, {"source", " "}}), Catch::Contains("gpu_spread.source must say where"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", 8}, {"source", "x"}}), Catch::Contains("gpu_spread.cv must be a non-negative number"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", 1}, {"source", "x"}}), Catch::Contains("gpu_spread.cv must be a fraction below 1"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", -0.1}, {"source", "x"}}), Catch::Contains("gpu_spread.cv must be a non-negative"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", "0.08"}, {"source", "x"}}), Catch::Contains("gpu_spread.cv must be a non-negative"));
  CHECK_THAT(gpuSpreadRefusal({{"cv", 0.08}, {"source", "x"}, {"sigma", 1}}), Catch::Contains("unknown key 'gpu_spread.sigma'"));
}

TEST_CASE("The fleet's spread on top of the measured one, by hand", "[predict][fleet]") {
  MeasuredStep run = handMeasuredStep({{"p0", 262144, 4, 0.04}});
  // No measured spread: the fleet's alone, cv · μ · e_N = 0.08 × 70 ms × 1.0293754 at N = 4.
  StepPrediction p = predictStep(run, fleetHardware(0.08), 4, {});
  CHECK(p.stragglerS == Approx(0.08 * 0.07 * 1.0293754).epsilon(1e-6));
  CHECK(p.fleetStragglerS == Approx(p.stragglerS));
  CHECK(predictStep(run, fleetHardware(0.08), 1, {}).stragglerS == 0);
  Hardware halved = fleetHardware(0.08);
  halved.computeScale = 0.5;
  CHECK(predictStep(run, halved, 4, {}).stragglerS == Approx(0.5 * 0.08 * 0.07 * 1.0293754).epsilon(1e-6));
  // Measured 60 and 80 ms on one rank: D(2) = 75 − 70 = 5 ms, the fleet's 0.08 × 70 ms / √π; combined in
  // quadrature, between the larger and the sum.
  run.spread = makeComputeSpread({0.06, 0.08}, 1);
  const double fleet2 = 0.08 * 0.07 / std::sqrt(kFleetPi);
  p = predictStep(run, fleetHardware(0.08), 2, {});
  CHECK(p.stragglerS == Approx(std::sqrt(0.005 * 0.005 + fleet2 * fleet2)).epsilon(1e-6));
  CHECK(p.fleetStragglerS == Approx(p.stragglerS - 0.005).epsilon(1e-6));
  CHECK(p.stragglerS > std::max(0.005, fleet2));
  CHECK(p.stragglerS < 0.005 + fleet2);
  // Measured on 2 ranks: the input already waited for the slower of 2, fleet included: excess(4) − excess(2).
  run.spread = makeComputeSpread({0.06, 0.08, 0.07, 0.075}, 2);
  const auto excess = [&](int n) {
    const double d = run.spread.expectedMaxS(n) - run.spread.meanS(), f = 0.08 * 0.07 * expectedMaxOfNormals(n);
    return std::sqrt(d * d + f * f);
  };
  CHECK(predictStep(run, fleetHardware(0.08), 4, {}).stragglerS == Approx(excess(4) - excess(2)).epsilon(1e-9));
  CHECK(predictStep(run, fleetHardware(0.08), 2, {}).stragglerS == Approx(0).margin(1e-15));
}

TEST_CASE("A hardware file without gpu_spread (or with cv 0) predicts as before", "[predict][fleet]") {
  MeasuredStep run = handMeasuredStep({{"p0", 262144, 4, 0.04}});
  run.spread = makeComputeSpread({0.06, 0.08, 0.07, 0.075}, 1);
  const Hardware plain = hardwareFromJson(fleetHardwareJson(), "plain.json");
  for (const int world : {1, 2, 4, 64}) {
    const StepPrediction p = predictStep(run, plain, world, {}), zero = predictStep(run, fleetHardware(0), world, {});
    CHECK(p.stragglerS == run.spread.stragglerS(world));
    CHECK(p.fleetStragglerS == 0);
    CHECK(zero.stepS == p.stepS);
    CHECK(zero.epochS == p.epochS);
    CHECK(predictStep(run, fleetHardware(0.08), world, {}).stepS >= p.stepS);
  }
}

TEST_CASE("The fleet's spread is in the Assumed table with its source, and outside the band", "[predict][fleet]") {
  MeasuredStep run = handMeasuredStep({{"p0", 262144, 4, 0.04}});
  const Hardware hw = fleetHardware(0.08);
  const StepPrediction one = predictStep(run, hw, 1, {}), eight = predictStep(run, hw, 8, {});
  std::string assumed;
  const auto tables = predictionTables(run, hw, "fleet.json", {one, eight}, one);
  for (const auto& row : tables.front().rows)
    assumed += row[0].text + ": " + row[1].text + "\n";
  CHECK_THAT(assumed, Catch::Contains("fleet spread: the hardware file's gpu_spread") &&
                          Catch::Contains("source: a test's figure"));
  // No measured spread and no compute samples: the band is the point value, the fleet's share included.
  const PredictionBand band = predictionBand(eight, one, inputUncertainty(run, {1, 8}), hw.computeScale);
  CHECK(eight.stragglerS > 0);
  CHECK(band.stepS.lo == eight.stepS);
  CHECK(band.stepS.hi == eight.stepS);
}
