// The band of a prediction (experiments/predict/prediction_band.h): the mean compute's Student's t interval
// by hand, the straggler term's bootstrap interval, and the band on the step, T and efficiency: it holds the
// point value, narrows as the input has more samples, is the point value for an input without spread, and
// matches a case worked by hand; the tables print it.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "experiments/predict/hardware.h"
#include "experiments/predict/prediction_band.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/step_model.h"
#include "hand_step.h"

using namespace dtbench::predict;

namespace {

Hardware bandHardware() {
  Hardware h;
  h.ranksPerNode = 1;
  h.inter = h.intra = {1e8, 0};
  return h;
}

// n samples at a normal's quantiles (mean `mean`, sd `sd`), by the inverse of its CDF (bisection on erfc).
std::vector<double> normalQuantiles(int n, double mean, double sd) {
  std::vector<double> out;
  for (int i = 1; i <= n; ++i) {
    const double p = (i - 0.5) / n;
    double lo = -10, hi = 10;
    for (int k = 0; k < 100; ++k) {
      const double mid = (lo + hi) / 2;
      (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
    }
    out.push_back(mean + sd * (lo + hi) / 2);
  }
  return out;
}

// One bucket of 1 MiB ready at the end of backward; compute 70 ms; the given samples of the step's compute
// (the critical rank's per step) and per-rank spread.
MeasuredStep bandStep(std::vector<double> computeSamples, std::vector<double> spread, int inputWorld = 1) {
  MeasuredStep run = handMeasuredStep({{"p0", 262144, 4, 0.04}});
  run.computeSamplesS = std::move(computeSamples);
  run.spread = makeComputeSpread(std::move(spread), inputWorld);
  return run;
}

PredictionBand bandAt(const MeasuredStep& run, int world, const Hardware& hw = bandHardware()) {
  const StepPrediction p = predictStep(run, hw, world, {});
  const StepPrediction one = predictStep(run, hw, 1, {});
  return predictionBand(p, one, inputUncertainty(run, {1, world}), hw.computeScale);
}

double efficiencyOf(const MeasuredStep& run, int world) {
  const StepPrediction p = predictStep(run, bandHardware(), world, {});
  return predictStep(run, bandHardware(), 1, {}).epochS / p.epochS / world;
}

}  // namespace

TEST_CASE("The mean compute's interval is the report's Student's t", "[predict][band]") {
  // 60, 70, 80 ms: s = 10 ms, t(2) = 4.303: ± 4.303 × 10 / √3 = 24.843 ms.
  CHECK(meanHalfWidthS({0.06, 0.07, 0.08}) == Approx(4.303 * 0.01 / std::sqrt(3.0)).epsilon(1e-9));
  // 31 samples: t(30) = 2.042.
  std::vector<double> many;
  for (int i = 0; i < 31; ++i) many.push_back(i % 2 ? 1.0 : 3.0);
  double mean = 0, squares = 0;
  for (const double x : many) mean += x / 31;
  for (const double x : many) squares += (x - mean) * (x - mean);
  CHECK(meanHalfWidthS(many) == Approx(2.042 * std::sqrt(squares / 30) / std::sqrt(31.0)).epsilon(1e-9));
  CHECK(meanHalfWidthS({0.07, 0.07, 0.07, 0.07}) == 0);
  CHECK(meanHalfWidthS({0.07}) == 0);
  CHECK(meanHalfWidthS({}) == 0);
}

TEST_CASE("The straggler term's interval: bootstrap, seeded, 0 without spread and at the input's world",
          "[predict][band]") {
  const ComputeSpread spread = makeComputeSpread(normalQuantiles(40, 0.07, 0.005), 1);
  const auto widths = stragglerHalfWidthsS(spread, {1, 2, 8, 40, 64, 1024});
  CHECK(widths.at(1) == 0);  // S(1) = 0 on a one-rank input, exactly
  for (const int n : {2, 8, 40, 64, 1024}) {
    CHECK(widths.at(n) > 0);
    CHECK(widths.at(n) < spread.stragglerS(n));  // 40 samples fix it to better than its own size
  }
  CHECK(widths.at(8) > widths.at(2));
  CHECK(widths.at(1024) > widths.at(64));  // further into the fitted tail, less known
  CHECK(stragglerHalfWidthsS(spread, {8}) == stragglerHalfWidthsS(spread, {8}));  // the same every run
  // The width is 1.96 × the bootstrap's standard error: the standard error of S(2) = E[max of 2] − mean = half
  // the mean absolute difference, for a normal about 0.5 × √(2/π)… ; here only its order: a few tenths of σ/√n.
  CHECK(widths.at(2) > 0.1 * 0.005 / std::sqrt(40.0) * 1.96);
  CHECK(widths.at(2) < 3 * 0.005 / std::sqrt(40.0) * 1.96);
  // More samples of the same spread: narrower, about as 1/√n (16 times the samples, a quarter the width).
  const auto more = stragglerHalfWidthsS(makeComputeSpread(normalQuantiles(640, 0.07, 0.005), 1), {8, 64, 1024});
  for (const int n : {8, 64, 1024}) {
    CHECK(more.at(n) < widths.at(n) / 2);
    CHECK(more.at(n) > widths.at(n) / 8);
  }
  // Measured on 4 ranks: S(4) = 0 exactly; S(2) < 0 has an interval too.
  const auto four = stragglerHalfWidthsS(makeComputeSpread(normalQuantiles(40, 0.07, 0.005), 4), {1, 2, 4, 16});
  CHECK(four.at(4) == 0);
  CHECK(four.at(2) > 0);
  CHECK(four.at(16) > 0);
  // No spread, or no samples: 0 everywhere.
  for (const auto& [n, w] : stragglerHalfWidthsS(makeComputeSpread({0.07, 0.07, 0.07}, 1), {2, 64})) CHECK(w == 0);
  for (const auto& [n, w] : stragglerHalfWidthsS(ComputeSpread{}, {2, 64})) CHECK(w == 0);
}

TEST_CASE("The band by hand: the mean compute's interval, no per-rank spread", "[predict][band]") {
  // Compute samples 60, 70, 80 ms (mean 70 ms), a per-rank spread of none: δC = 24.843 ms moves the step by
  // ± δC and T(N) by ± steps × δC; the efficiency T(1) / (N T(N)) = 100 (C + c) / (2 · 50 · (C + c + X)) at
  // c = ± δC, X the exposed all-reduce.
  const MeasuredStep run = bandStep({0.06, 0.07, 0.08}, {});
  const double delta = 4.303 * 0.01 / std::sqrt(3.0);
  const StepPrediction p = predictStep(run, bandHardware(), 2, {});
  REQUIRE(p.stepsPerEpoch == 50);
  const double exposed = p.stepS - 0.07;
  REQUIRE(exposed > 0.01);
  const PredictionBand band = bandAt(run, 2);
  CHECK(band.stepS.lo == Approx(p.stepS - delta).epsilon(1e-9));
  CHECK(band.stepS.hi == Approx(p.stepS + delta).epsilon(1e-9));
  CHECK(band.epochS.lo == Approx(50 * (p.stepS - delta)).epsilon(1e-9));
  CHECK(band.epochS.hi == Approx(50 * (p.stepS + delta)).epsilon(1e-9));
  CHECK(band.efficiency.lo == Approx((0.07 - delta) / (0.07 - delta + exposed)).epsilon(1e-9));
  CHECK(band.efficiency.hi == Approx((0.07 + delta) / (0.07 + delta + exposed)).epsilon(1e-9));
  // The baseline's own efficiency is T(1)/T(1), exactly 1; its T still has the band.
  const PredictionBand one = bandAt(run, 1);
  CHECK(one.efficiency.lo == 1);
  CHECK(one.efficiency.hi == 1);
  CHECK(one.epochS.hi == Approx(100 * (0.07 + delta)).epsilon(1e-9));
}

TEST_CASE("The band holds the point value and narrows with the input's samples", "[predict][band]") {
  // The same spread (sd 5 ms, normal) measured over 12 and over 192 steps.
  const std::vector<double> few = normalQuantiles(12, 0.07, 0.005), many = normalQuantiles(192, 0.07, 0.005);
  const MeasuredStep fewRun = bandStep(few, few), manyRun = bandStep(many, many);
  for (const int world : {2, 8, 12, 64, 512}) {
    INFO("N = " << world);
    const StepPrediction p = predictStep(fewRun, bandHardware(), world, {});
    const PredictionBand a = bandAt(fewRun, world), b = bandAt(manyRun, world);
    const double e = efficiencyOf(fewRun, world);
    CHECK(a.stepS.lo < p.stepS);
    CHECK(p.stepS < a.stepS.hi);
    CHECK(a.epochS.lo < p.epochS);
    CHECK(p.epochS < a.epochS.hi);
    CHECK(a.efficiency.lo < e);
    CHECK(e < a.efficiency.hi);
    CHECK(b.epochS.hi - b.epochS.lo < (a.epochS.hi - a.epochS.lo) / 2);
    CHECK(b.efficiency.hi - b.efficiency.lo < (a.efficiency.hi - a.efficiency.lo) / 2);
  }
  // An input of 4 ranks predicted at 2: its straggler term is negative and the band still holds the point.
  const MeasuredStep four = bandStep(few, normalQuantiles(48, 0.07, 0.005), 4);
  const StepPrediction two = predictStep(four, bandHardware(), 2, {});
  REQUIRE(two.stragglerS < 0);
  const PredictionBand b = bandAt(four, 2);
  CHECK(b.stepS.lo < two.stepS);
  CHECK(two.stepS < b.stepS.hi);
  CHECK(b.efficiency.lo <= efficiencyOf(four, 2));
  CHECK(efficiencyOf(four, 2) <= b.efficiency.hi);
}

TEST_CASE("An input without spread has a band of its point value", "[predict][band]") {
  const MeasuredStep run = bandStep({0.07, 0.07, 0.07, 0.07}, {0.07, 0.07, 0.07, 0.07});
  for (const int world : {1, 2, 4, 64}) {
    const StepPrediction p = predictStep(run, bandHardware(), world, {});
    const PredictionBand band = bandAt(run, world);
    CHECK(band.stepS.lo == p.stepS);
    CHECK(band.stepS.hi == p.stepS);
    CHECK(band.epochS.lo == p.epochS);
    CHECK(band.epochS.hi == p.epochS);
    CHECK(band.efficiency.lo == efficiencyOf(run, world));
    CHECK(band.efficiency.hi == efficiencyOf(run, world));
  }
  // A step description without compute_spread: nothing to estimate, the point value too.
  MeasuredStep described = handMeasuredStep({{"p0", 262144, 4, 0.04}});
  described.described = true;
  const PredictionBand band = bandAt(described, 8);
  CHECK(band.epochS.lo == band.epochS.hi);
  CHECK(inputUncertainty(described, {8}).computeSource.find("no compute_spread") != std::string::npos);
}

TEST_CASE("Table 1 prints the band beside T and the efficiency, the Assumed table what it leaves out",
          "[predict][band]") {
  const std::vector<double> samples = normalQuantiles(12, 0.07, 0.005);
  const MeasuredStep run = bandStep(samples, samples);
  const Hardware hw = bandHardware();
  const StepPrediction one = predictStep(run, hw, 1, {});
  const auto tables = predictionTables(run, hw, "hw.json", {one, predictStep(run, hw, 4, {})}, one);
  const auto& t1 = tables.at(1);
  REQUIRE(t1.name == "time_speedup");
  const auto column = [&](const std::string& name) {
    for (size_t i = 0; i < t1.columns.size(); ++i)
      if (t1.columns[i] == name) return i;
    FAIL("no column " << name);
    return size_t{0};
  };
  const PredictionBand band = bandAt(run, 4);
  const auto& row = t1.rows.at(1);
  CHECK(row[column("T_lo_s")].value == Approx(band.epochS.lo));
  CHECK(row[column("T_hi_s")].value == Approx(band.epochS.hi));
  CHECK(row[column("T_lo_s")].value < row[column("T_s")].value);
  CHECK(row[column("T_s")].value < row[column("T_hi_s")].value);
  CHECK(row[column("efficiency_lo")].value < row[column("efficiency")].value);
  CHECK(row[column("efficiency")].value < row[column("efficiency_hi")].value);
  std::string assumed;
  for (const auto& r : tables.front().rows) assumed += r[0].text + ": " + r[1].text + "\n";
  CHECK_THAT(assumed, Catch::Contains("band: ") && Catch::Contains("do not cover the hardware file's numbers") &&
                          Catch::Contains("the network model's form") && Catch::Contains("systematic differences"));
}
