// The per-iteration spread of `dtbench allreduce --timing each` (experiments/allreduce/iteration_spread.h):
// each iteration is its slowest rank's, the spread of those times worked by hand, bad layouts refused.
#include "experiments/allreduce/iteration_spread.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using dtbench::experiments::iterationSpread;

TEST_CASE("iteration spread: each iteration is its slowest rank's (the worked example)", "[allreduce][iterations]") {
  // rank 0 {10, 12, 11}, rank 1 {11, 10, 20}: the iterations' times are {11, 12, 20}.
  const auto s = iterationSpread({10, 12, 11, 11, 10, 20}, 2, 3);
  CHECK(s.n == 3);
  CHECK(s.min == 11);
  CHECK(s.max == 20);
  CHECK(s.p50 == 12);
  CHECK(s.p99 == Approx(12 + 0.98 * 8));  // h = 2 x 0.99 = 1.98: 12 + 0.98 x (20 - 12) = 19.84
  CHECK(s.mean == Approx(43.0 / 3));
  // sample sd: deviations -3.333, -2.333, 5.667; squares 11.11 + 5.44 + 32.11 = 48.67; / 2 = 24.33
  CHECK(*s.cvPct == Approx(100 * std::sqrt(73.0 / 3) / (43.0 / 3)));  // 34.4 %
  CHECK(s.noisyCv());
  CHECK(s.noisySpike());  // 20 > 1.5 x 12
}

TEST_CASE("iteration spread: steady iterations are not noisy, and one rank is its own maximum", "[allreduce][iterations]") {
  const auto s = iterationSpread({100, 101, 99, 100}, 1, 4);
  CHECK(s.min == 99);
  CHECK(s.max == 101);
  CHECK(*s.cvPct == Approx(100 * std::sqrt(2.0 / 3) / 100));  // 0.82 %
  CHECK_FALSE(s.noisy());
  CHECK(s.noisyText() == "no");
  // A single iteration has no CV (nothing to vary), and is not flagged.
  const auto one = iterationSpread({7, 9}, 2, 1);
  CHECK(one.max == 9);
  CHECK_FALSE(one.cvPct);
  CHECK_FALSE(one.noisy());
}

TEST_CASE("iteration spread: a slow rank in one iteration only is that iteration's time", "[allreduce][iterations]") {
  // Four ranks, two iterations; rank 2 is slow in iteration 1 only: {max(5,5,5,5), max(5,5,50,5)} = {5, 50}.
  const auto s = iterationSpread({5, 5, 5, 5, 5, 50, 5, 5}, 4, 2);
  CHECK(s.min == 5);
  CHECK(s.max == 50);
}

TEST_CASE("iteration spread: a wrong layout or time is refused by name", "[allreduce][iterations]") {
  CHECK_THROWS_WITH(iterationSpread({1, 2, 3}, 2, 2), "iteration spread: 3 times gathered, want 2 ranks x 2 iterations");
  CHECK_THROWS_AS(iterationSpread({}, 0, 1), std::invalid_argument);
  CHECK_THROWS_WITH(iterationSpread({1, 2, -1, 4}, 2, 2),
                    Catch::Contains("rank 1's iteration 0 took") && Catch::Contains("finite and non-negative"));
  CHECK_THROWS_WITH(iterationSpread({1, std::numeric_limits<double>::quiet_NaN()}, 1, 2),
                    Catch::Contains("rank 0's iteration 1 took"));
  CHECK_THROWS_WITH(iterationSpread({1, std::numeric_limits<double>::infinity()}, 2, 1),
                    Catch::Contains("rank 1's iteration 0 took"));
}
