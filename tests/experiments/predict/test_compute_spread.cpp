// The spread of the ranks' compute (experiments/predict/compute_spread.h): the expected maximum of N draws
// from the measured samples against hand-worked sums, the exponential tail fitted beyond them, and the
// straggler term the step model charges (step_model.h) and a step description carries.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "hand_step.h"
#include "experiments/predict/step_description.h"
#include "experiments/predict/step_model.h"
#include "experiments/predict/compute_spread.h"

using namespace dtbench::predict;

namespace {

// One parameter of 1 MiB ready at the end of a 40 ms backward; forward 20 ms; compute 70 ms, whose
// per-rank samples are 60 and 80 ms.
MeasuredStep spreadOneBucketStep() {
  MeasuredStep run = handMeasuredStep({{"p0", 262144, 4, 0.04}});
  run.spread = makeComputeSpread({0.08, 0.06}, 1);
  return run;
}

Hardware spreadTestHardware() {
  Hardware h;
  h.ranksPerNode = 1;
  h.inter = h.intra = {1e8, 0};
  return h;
}

}  // namespace

TEST_CASE("The expected maximum of N draws from the samples, exactly", "[predict][spread]") {
  // E[max] = Σ x(i) [(i/n)^N − ((i−1)/n)^N].
  const std::vector<double> samples = {4, 1, 3, 2};
  CHECK(expectedMaxOfSamples(samples, 1) == Approx(2.5));
  CHECK(expectedMaxOfSamples(samples, 2) == Approx((1 * 1 + 2 * 3 + 3 * 5 + 4 * 7) / 16.0));   // 3.125
  CHECK(expectedMaxOfSamples(samples, 3) == Approx((1 * 1 + 2 * 7 + 3 * 19 + 4 * 37) / 64.0));  // 3.4375
  CHECK(expectedMaxOfSamples({10, 20}, 2) == Approx(17.5));
  CHECK(expectedMaxOfSamples({5, 5, 5}, 16) == Approx(5));
  // Enumerated: all 4^2 ordered pairs of {1, 2, 3, 4}, the mean of their maxima.
  double sum = 0;
  for (const double a : samples)
    for (const double b : samples) sum += std::max(a, b);
  CHECK(expectedMaxOfSamples(samples, 2) == Approx(sum / 16));
}

TEST_CASE("Beyond the samples an exponential tail is fitted above the top quarter", "[predict][spread]") {
  // 1..8: k = 2 above u = x(6) = 6, mean excess (1 + 2) / 2 = 1.5, q = 2/8.
  const std::vector<double> eight = {8, 7, 6, 5, 4, 3, 2, 1};
  const ExponentialTail tail = fitExponentialTail(eight);
  CHECK(tail.tailSamples == 2);
  CHECK(tail.thresholdS == 6);
  CHECK(tail.meanExcessS == Approx(1.5));
  CHECK(tail.fraction == Approx(0.25));
  // N = 1 is the fitted distribution's mean: Σ_{i<=6} x(i)/8 + u q + β q = 21/8 + 1.5 + 0.375.
  CHECK(expectedMaxWithTail(eight, tail, 1) == Approx(21.0 / 8 + 6 * 0.25 + 1.5 * 0.25));
  // N = 2 by hand: body Σ_{i<=6} x(i)[(i/8)^2 − ((i−1)/8)^2] = Σ i(2i−1)/64 = 161/64; u(1 − 0.75^2);
  // β(q + (1 − 0.75^2)/2).
  CHECK(expectedMaxWithTail(eight, tail, 2) ==
        Approx(161.0 / 64 + 6 * (1 - 0.5625) + 1.5 * (0.25 + (1 - 0.5625) / 2)));
  // Samples at an exponential's quantiles: the fit recovers E[max of N] = β H_N (4096 ranks: 8.9 β)
  // within 3 %, where the samples alone cannot exceed their largest (6.7 β).
  std::vector<double> quantiles;
  const int n = 400;
  for (int i = 1; i <= n; ++i) quantiles.push_back(-2.0 * std::log(1 - (i - 0.5) / n));
  double harmonic = 0;
  for (int m = 1; m <= 4096; ++m) harmonic += 1.0 / m;
  const ComputeSpread spread = makeComputeSpread(quantiles, 1);
  CHECK(spread.fitted(4096));
  CHECK_FALSE(spread.fitted(400));
  CHECK(spread.expectedMaxS(4096) == Approx(2 * harmonic).epsilon(0.03));
  CHECK(expectedMaxOfSamples(quantiles, 4096) < 2 * 6.7);
  // Where both apply (64 of 400 samples) the fit and the exact order statistic agree within 2 %.
  CHECK(expectedMaxWithTail(quantiles, spread.tail(), 64) == Approx(expectedMaxOfSamples(quantiles, 64)).epsilon(0.02));
}

TEST_CASE("The straggler term is E[max of N] less what the input's ranks held", "[predict][spread]") {
  const ComputeSpread one = makeComputeSpread({1, 2, 3, 4}, 1);
  CHECK(one.stragglerS(1) == Approx(0).margin(1e-12));
  CHECK(one.stragglerS(2) == Approx(3.125 - 2.5));
  CHECK(one.meanS() == Approx(2.5));
  CHECK(one.sdS() == Approx(std::sqrt(5.0 / 3)));
  // Measured on 2 ranks: the input's compute already waited for the slower of 2.
  const ComputeSpread two = makeComputeSpread({1, 2, 3, 4}, 2);
  CHECK(two.stragglerS(2) == Approx(0).margin(1e-12));
  CHECK(two.stragglerS(3) == Approx(3.4375 - 3.125));
  CHECK(two.stragglerS(1) == Approx(2.5 - 3.125));
  CHECK(makeComputeSpread({}, 1).stragglerS(64) == 0);
  CHECK(makeComputeSpread({0.5}, 1).stragglerS(64) == 0);
}

TEST_CASE("The step model charges the straggler term to the slowest rank's forward", "[predict][spread]") {
  // N = 2: E[max of 60, 80 ms] = 75 ms, 5 ms over the 70 ms mean. Backward starts at 25 ms, the bucket
  // (262145 elements with the stop flag, a ring of 2 at 1e8 B/s) at its end, 65 ms.
  MeasuredStep run = spreadOneBucketStep();
  const StepPrediction p = predictStep(run, spreadTestHardware(), 2, {});
  CHECK(p.stragglerS == Approx(0.005));
  CHECK_FALSE(p.stragglerFitted);
  CHECK(p.backwardStartS() == Approx(0.025));
  REQUIRE(p.collectives.size() == 1);
  CHECK(p.collectives[0].launchS == Approx(0.065));
  const double bucket = 2 * 524292 / 1e8;  // chunks of 131072 and 131073 elements
  CHECK(p.stepS == Approx(0.075 + bucket).epsilon(1e-9));
  CHECK(predictStep(run, spreadTestHardware(), 1, {}).stepS == Approx(0.07));
  // Beyond the 2 samples: the fitted tail, flagged.
  CHECK(predictStep(run, spreadTestHardware(), 4, {}).stragglerFitted);
  // Without samples, as before the term existed.
  run.spread = ComputeSpread{};
  CHECK(predictStep(run, spreadTestHardware(), 2, {}).stepS == Approx(0.07 + bucket).epsilon(1e-9));
}

TEST_CASE("A step description carries the spread and predicts the same straggler term", "[predict][spread]") {
  MeasuredStep run = spreadOneBucketStep();
  run.spread = makeComputeSpread({0.06, 0.08, 0.07, 0.1}, 2);
  const MeasuredStep described = stepFromDescription(describeStep(run, "hand"), "hand.json");
  CHECK(described.spread.samplesS == run.spread.samplesS);
  CHECK(described.spread.inputWorld == 2);
  CHECK(predictStep(described, spreadTestHardware(), 8, {}).stragglerS ==
        Approx(predictStep(run, spreadTestHardware(), 8, {}).stragglerS));
  nlohmann::json bad = describeStep(run, "hand");
  bad["compute_spread"]["samples_s"][1] = -1;
  CHECK_THROWS_WITH(stepFromDescription(bad, "bad.json"), Catch::Contains("compute_spread.samples_s[1]."));
}
