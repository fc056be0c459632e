#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/report/runs/batch_times.h"

using dtbench::report::describe;
using dtbench::report::detectPeriodicStall;
using dtbench::report::PeriodicStall;
using dtbench::report::quantile;
using dtbench::report::quantiles;
using dtbench::report::slowestTenthShare;
using Catch::Matchers::Contains;

namespace {

// n batches of `base` seconds, except those with i mod period == phase, which take base·slowdown; each
// value is then multiplied by a uniform factor in [1 - noise, 1 + noise].
std::vector<double> stalledSeries(int n, int period, int phase, double base, double slowdown, double noise,
                                  unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<double> series;
  for (int i = 0; i < n; ++i) {
    const double value = i % period == phase ? base * slowdown : base;
    series.push_back(noise > 0 ? value * jitter(rng) : value);
  }
  return series;
}

double sumOf(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

}  // namespace

TEST_CASE("quantile interpolates between order statistics", "[report][batch_times]") {
  const std::vector<double> values{4, 1, 3, 2};  // sorted 1 2 3 4, n - 1 = 3
  CHECK(quantile(values, 0.5) == Approx(2.5));   // h = 1.5: 2 + 0.5·(3 - 2)
  CHECK(quantile(values, 0.9) == Approx(3.7));   // h = 2.7: 3 + 0.7·(4 - 3)
  CHECK(quantile(values, 0.99) == Approx(3.97)); // h = 2.97: 3 + 0.97·(4 - 3)
  CHECK(quantile(values, 0.0) == 1);
  CHECK(quantile(values, 1.0) == 4);
  CHECK(quantile({10, 20, 30}, 0.25) == Approx(15));  // h = 0.5: 10 + 0.5·(20 - 10)
  CHECK(quantile({10, 20, 30}, 0.5) == 20);           // h = 1 exactly: x[1]
  CHECK(quantile({7}, 0.9) == 7);                     // n = 1: h = 0
}

TEST_CASE("quantiles of a small vector by hand", "[report][batch_times]") {
  const auto q = quantiles({1, 2, 3, 4});
  CHECK(q.p50 == Approx(2.5));
  CHECK(q.p90 == Approx(3.7));
  CHECK(q.p99 == Approx(3.97));
  CHECK(q.max == 4);

  const auto single = quantiles({0.25});
  CHECK(single.p50 == 0.25);
  CHECK(single.p90 == 0.25);
  CHECK(single.p99 == 0.25);
  CHECK(single.max == 0.25);
}

TEST_CASE("quantiles match numpy for a random vector", "[report][batch_times]") {
  // The vector and the expected values were obtained with Debian's numpy 1.24.2:
  // /usr/bin/python3 -c 'import numpy as np; x = np.round(np.random.default_rng(7).lognormal(-3, 0.5, 37), 6);
  //   print([float(v) for v in x]); print([repr(float(np.percentile(x, q))) for q in (50, 90, 99, 100, 25)])'
  const std::vector<double> x{0.049818, 0.057808, 0.04341,  0.031895, 0.039663, 0.030324, 0.051307, 0.097306,
                              0.038926, 0.036508, 0.063604, 0.059513, 0.052482, 0.031266, 0.049064, 0.070485,
                              0.025423, 0.039605, 0.019243, 0.026127, 0.019824, 0.044266, 0.026418, 0.057019,
                              0.053846, 0.045345, 0.014145, 0.038031, 0.048594, 0.052689, 0.023166, 0.039208,
                              0.030523, 0.033226, 0.084623, 0.033248, 0.048984};
  const auto q = quantiles(x);
  CHECK(q.p50 == Approx(0.039663).epsilon(1e-12));
  CHECK(q.p90 == Approx(0.06114939999999999).epsilon(1e-12));
  CHECK(q.p99 == Approx(0.09274012000000001).epsilon(1e-12));
  CHECK(q.max == 0.097306);
  CHECK(quantile(x, 0.25) == Approx(0.031266).epsilon(1e-12));
  // The same numpy session: s = np.sort(x)[::-1]; s[:4].sum() / x.sum() (ceil(37/10) = 4 largest).
  CHECK(slowestTenthShare(x) == Approx(0.19665922391239954).epsilon(1e-12));
}

TEST_CASE("slowest tenth share by hand", "[report][batch_times]") {
  std::vector<double> twenty(20);
  std::iota(twenty.begin(), twenty.end(), 1.0);  // 1 … 20, sum 210
  CHECK(slowestTenthShare(twenty) == Approx(39.0 / 210));  // ceil(20/10) = 2 largest: 19 + 20

  std::vector<double> twentyOne(21);
  std::iota(twentyOne.begin(), twentyOne.end(), 1.0);  // 1 … 21, sum 231
  CHECK(slowestTenthShare(twentyOne) == Approx(60.0 / 231));  // ceil(2.1) = 3 largest: 19 + 20 + 21

  CHECK(slowestTenthShare({1, 1, 8, 1, 1}) == Approx(8.0 / 12));  // ceil(0.5) = 1 largest
  CHECK(slowestTenthShare({3}) == 1);
  CHECK(slowestTenthShare({0, 0, 0}) == 0);  // total 0
}

TEST_CASE("every 10th batch 30x slower with noise is found", "[report][batch_times]") {
  const auto series = stalledSeries(100, 10, 2, 0.1, 30, 0.1, 42);
  const auto stall = detectPeriodicStall(series);
  REQUIRE(stall);
  CHECK(stall->period == 10);
  CHECK(stall->phase == 2);
  CHECK(stall->occurrences == 10);
  CHECK(stall->ratio > 30 * 0.9 / 1.1);
  CHECK(stall->ratio < 30 * 1.1 / 0.9);
  double classSum = 0;
  for (size_t i = 2; i < series.size(); i += 10) classSum += series[i];
  CHECK(stall->shareOfTime == Approx(classSum / sumOf(series)));
}

TEST_CASE("the reported period is the fundamental one", "[report][batch_times]") {
  // k = 20 (phases 2 and 12) also matches; k = 10 is the answer.
  const auto every10 = detectPeriodicStall(stalledSeries(200, 10, 2, 0.1, 30, 0.1, 7));
  REQUIRE(every10);
  CHECK(every10->period == 10);
  CHECK(every10->phase == 2);
  CHECK(every10->occurrences == 20);

  // A true period of 20: the k = 10 class holds only half slow batches, so 20 is reported.
  const auto every20 = detectPeriodicStall(stalledSeries(200, 20, 13, 0.1, 30, 0.1, 7));
  REQUIRE(every20);
  CHECK(every20->period == 20);
  CHECK(every20->phase == 13);
}

TEST_CASE("period 2 alternating slow and fast is found", "[report][batch_times]") {
  const auto series = stalledSeries(20, 2, 1, 1.0, 5, 0, 0);  // 1 5 1 5 …
  const auto stall = detectPeriodicStall(series);
  REQUIRE(stall);
  CHECK(stall->period == 2);
  CHECK(stall->phase == 1);
  CHECK(stall->ratio == Approx(5));
  CHECK(stall->occurrences == 10);
  CHECK(stall->shareOfTime == Approx(50.0 / 60));

  // Six values are the shortest series searched.
  const auto shortest = detectPeriodicStall({1, 5, 1, 5, 1, 5});
  REQUIRE(shortest);
  CHECK(shortest->period == 2);
  CHECK(shortest->phase == 1);
}

TEST_CASE("a period 7 stall with phase 3 is found", "[report][batch_times]") {
  const auto stall = detectPeriodicStall(stalledSeries(70, 7, 3, 0.2, 4, 0.05, 3));
  REQUIRE(stall);
  CHECK(stall->period == 7);
  CHECK(stall->phase == 3);
  CHECK(stall->occurrences == 10);
  CHECK(stall->ratio == Approx(4).epsilon(0.15));
}

TEST_CASE("the worked example of the header holds", "[report][batch_times]") {
  std::vector<double> series(30, 1.0);
  series[2] = series[12] = series[22] = 30;
  const auto stall = detectPeriodicStall(series);
  REQUIRE(stall);
  CHECK(stall->period == 10);
  CHECK(stall->phase == 2);
  CHECK(stall->ratio == Approx(30));
  CHECK(stall->occurrences == 3);
  CHECK(stall->shareOfTime == Approx(90.0 / 117));
}

TEST_CASE("among the phases of one period the largest ratio wins", "[report][batch_times]") {
  std::vector<double> series(100, 1.0);
  for (size_t i = 5; i < series.size(); i += 10) series[i] = 5;   // phase 5: 5x
  for (size_t i = 2; i < series.size(); i += 10) series[i] = 30;  // phase 2: 30x
  const auto stall = detectPeriodicStall(series);
  REQUIRE(stall);
  CHECK(stall->period == 10);
  CHECK(stall->phase == 2);
  CHECK(stall->ratio == Approx(30));
}

TEST_CASE("no stall in series without a periodic one", "[report][batch_times]") {
  CHECK_FALSE(detectPeriodicStall(std::vector<double>(100, 0.1)));  // constant
  CHECK_FALSE(detectPeriodicStall(std::vector<double>(100, 0.0)));  // all zero: medR = 0

  std::vector<double> outlier(100, 0.1);
  outlier[37] = 5;
  CHECK_FALSE(detectPeriodicStall(outlier));

  std::mt19937 rng(1234);
  std::lognormal_distribution<double> lognormal(std::log(0.1), 0.1);
  std::vector<double> noisy;
  for (int i = 0; i < 500; ++i) noisy.push_back(lognormal(rng));
  CHECK_FALSE(detectPeriodicStall(noisy));

  CHECK_FALSE(detectPeriodicStall({1, 5, 1, 5, 1}));  // under 6 values
  CHECK_FALSE(detectPeriodicStall({}));
}

TEST_CASE("a random heavy tail is not periodic", "[report][batch_times]") {
  // Every 10th batch is slow but so are 30% of the others at random: the rest fails the 20% test.
  auto series = stalledSeries(200, 10, 4, 0.1, 30, 0.1, 5);
  std::mt19937 rng(99);
  std::bernoulli_distribution heavy(0.3);
  for (size_t i = 0; i < series.size(); ++i) {
    if (i % 10 != 4 && heavy(rng)) series[i] *= 30;
  }
  CHECK_FALSE(detectPeriodicStall(series));

  // Random 5% slow batches alone make no class of mostly slow batches.
  std::vector<double> sparse(500, 0.1);
  std::bernoulli_distribution rare(0.05);
  for (auto& value : sparse) {
    if (rare(rng)) value *= 20;
  }
  CHECK_FALSE(detectPeriodicStall(sparse));
}

TEST_CASE("describe says the stall in words", "[report][batch_times]") {
  PeriodicStall stall;
  stall.period = 10;
  stall.phase = 2;
  stall.ratio = 31.2;
  stall.occurrences = 9;
  stall.shareOfTime = 0.76;
  CHECK(describe(stall) == "every 10th batch (from batch 3) is 31.2x slower: 9 batches, 76% of the time");

  stall.period = 2;
  stall.phase = 0;
  stall.ratio = 5;
  stall.occurrences = 10;
  stall.shareOfTime = 50.0 / 60;
  CHECK(describe(stall) == "every 2nd batch (from batch 1) is 5.0x slower: 10 batches, 83% of the time");

  stall.period = 3;
  CHECK_THAT(describe(stall), Contains("every 3rd batch"));
  stall.period = 11;
  CHECK_THAT(describe(stall), Contains("every 11th batch"));
  stall.period = 12;
  CHECK_THAT(describe(stall), Contains("every 12th batch"));
  stall.period = 13;
  CHECK_THAT(describe(stall), Contains("every 13th batch"));
  stall.period = 21;
  CHECK_THAT(describe(stall), Contains("every 21st batch"));
  stall.period = 22;
  CHECK_THAT(describe(stall), Contains("every 22nd batch"));
  stall.period = 63;
  CHECK_THAT(describe(stall), Contains("every 63rd batch"));
}

TEST_CASE("describe words a detected stall", "[report][batch_times]") {
  std::vector<double> series(30, 1.0);
  series[2] = series[12] = series[22] = 30;
  const auto stall = detectPeriodicStall(series);
  REQUIRE(stall);
  CHECK(describe(*stall) == "every 10th batch (from batch 3) is 30.0x slower: 3 batches, 77% of the time");
}

TEST_CASE("empty inputs are rejected", "[report][batch_times]") {
  CHECK_THROWS_AS(quantile({}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(quantiles({}), std::invalid_argument);
  CHECK_THROWS_AS(slowestTenthShare({}), std::invalid_argument);
  CHECK_THROWS_WITH(quantiles({}), Contains("no values"));
}

TEST_CASE("q outside 0 to 1 is rejected", "[report][batch_times]") {
  CHECK_THROWS_AS(quantile({1, 2}, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1, 2}, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1, 2}, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK_THROWS_WITH(quantile({1, 2}, 1.5), Contains("outside [0, 1]"));
}

TEST_CASE("NaN and negative and infinite values are rejected with their index", "[report][batch_times]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(quantile({1, 2, nan}, 0.5), std::invalid_argument);
  CHECK_THROWS_WITH(quantile({1, 2, nan}, 0.5), Contains("index 2"));
  CHECK_THROWS_WITH(quantiles({-1, 2}), Contains("index 0"));
  CHECK_THROWS_WITH(slowestTenthShare({1, 2, 3, inf}), Contains("index 3"));

  std::vector<double> series(20, 0.1);
  series[7] = -0.5;
  CHECK_THROWS_AS(detectPeriodicStall(series), std::invalid_argument);
  CHECK_THROWS_WITH(detectPeriodicStall(series), Contains("index 7"));
  CHECK_THROWS_WITH(detectPeriodicStall({1, nan}), Contains("index 1"));  // checked before the length
}
