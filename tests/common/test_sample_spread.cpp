// SampleSpread (common/sample_spread.h): quantiles, CV and nccl-tests' noisy flags on samples worked by hand,
// the flags' thresholds from both sides.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/sample_spread.h"

using dtbench::common::sampleQuantile;
using dtbench::common::SampleSpread;
using dtbench::common::sampleSpread;
using Catch::Matchers::Contains;

TEST_CASE("the worked example of sample_spread.h holds", "[common][sample_spread]") {
  const SampleSpread s = sampleSpread({2, 1, 1, 1}, "t");
  CHECK(s.n == 4);
  CHECK(s.min == 1);
  CHECK(s.max == 2);
  CHECK(s.mean == Approx(1.25));
  CHECK(s.p50 == Approx(1.0));
  CHECK(s.p99 == Approx(1.97));  // h = 3·0.99 = 2.97: 1 + 0.97·(2 − 1)
  CHECK(*s.cvPct == Approx(40.0));  // s = √(0.75/3) = 0.5
  CHECK(*s.maxOverP50 == Approx(2.0));
  CHECK(s.noisyText() == "CV 40.00% > 5%; max 2.00x p50 > 1.5x");
}

TEST_CASE("CV just below and just above 5 %", "[common][sample_spread]") {
  // {1 − d, 1, 1 + d}: mean 1, s = √(2d²/2) = d, CV = 100·d %.
  const SampleSpread below = sampleSpread({0.951, 1.0, 1.049}, "t");
  CHECK(*below.cvPct == Approx(4.9));
  CHECK_FALSE(below.noisyCv());
  CHECK_FALSE(below.noisy());
  CHECK(below.noisyText() == "no");
  const SampleSpread above = sampleSpread({0.949, 1.0, 1.051}, "t");
  CHECK(*above.cvPct == Approx(5.1));
  CHECK(above.noisyCv());
  CHECK_FALSE(above.noisySpike());  // 1.051 / 1.0
  CHECK(above.noisyText() == "CV 5.10% > 5%");
}

TEST_CASE("a spike just below and just above 1.5x the median", "[common][sample_spread]") {
  // 400 samples of 1 and one spike x: p50 = 1, max/p50 = x; mean m = (400 + x)/401,
  // s² = (400(1 − m)² + (x − m)²)/400: CV about 2.4 %, below 5 %, so only the spike can flag.
  for (const double spike : {1.49, 1.5, 1.51}) {
    std::vector<double> samples(400, 1.0);
    samples.push_back(spike);
    const SampleSpread s = sampleSpread(samples, "t");
    const double m = (400 + spike) / 401;
    const double cv = 100 * std::sqrt((400 * (1 - m) * (1 - m) + (spike - m) * (spike - m)) / 400) / m;
    CHECK(*s.cvPct == Approx(cv));
    CHECK_FALSE(s.noisyCv());
    CHECK(*s.maxOverP50 == Approx(spike));
    CHECK(s.noisySpike() == (spike > 1.5));  // exactly 1.5x is not above it
  }
}

TEST_CASE("one sample has no CV and a zero median no ratio", "[common][sample_spread]") {
  const SampleSpread one = sampleSpread({3.0}, "t");
  CHECK_FALSE(one.cvPct);
  CHECK(one.p50 == 3.0);
  CHECK(one.p99 == 3.0);
  CHECK_FALSE(one.noisy());
  const SampleSpread zeros = sampleSpread({0, 0, 0}, "t");
  CHECK_FALSE(zeros.cvPct);
  CHECK_FALSE(zeros.maxOverP50);
}

TEST_CASE("bad samples are refused with their index", "[common][sample_spread]") {
  CHECK_THROWS_AS(sampleSpread({}, "t"), std::invalid_argument);
  CHECK_THROWS_WITH(sampleSpread({1, std::nan(""), 2}, "iteration times"),
                    Contains("iteration times") && Contains("index 1"));
  CHECK_THROWS_WITH(sampleSpread({1, -1}, "t"), Contains("index 1"));
  CHECK_THROWS_WITH(sampleQuantile({1, 2}, 1.5, "t"), Contains("outside [0, 1]"));
  CHECK(sampleQuantile({4, 1, 3, 2}, 0.9, "t") == Approx(3.7));  // h = 2.7: 3 + 0.7·(4 − 3)
}

TEST_CASE("Student's t at 95 % and the interval of a mean", "[common][sample_spread]") {
  CHECK(studentT95(1) == Approx(12.706));
  CHECK(studentT95(30) == Approx(2.042));
  CHECK(studentT95(60) == Approx(2.000).margin(0.001));   // tables: 2.000
  CHECK(studentT95(120) == Approx(1.980).margin(0.001));  // tables: 1.980
  CHECK_THROWS(studentT95(0));
  // 60, 70, 80 ms: mean 70, s = 10, t(2) = 4.303: 4.303 · 10/√3 = 24.843 ms.
  CHECK(meanHalfWidth95({0.060, 0.070, 0.080}) == Approx(0.024843).epsilon(1e-4));
  CHECK(meanHalfWidth95({0.5}) == 0);
  CHECK(meanHalfWidth95({0.5, 0.5, 0.5}) == 0);
}
