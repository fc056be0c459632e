// run/step_jitter.h: --inject-step-jitter's text read and written, its refusals, and its seeded draws:
// the distribution's mean and spread, ranks that differ, reruns that repeat.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "common/usage_error.h"
#include "run/step_jitter.h"

namespace run = dtbench::run;

namespace {

struct DrawMoments {
  double meanMs = 0, sdMs = 0;
};

DrawMoments momentsOf(const run::StepJitter& jitter, uint64_t seed, int64_t rank, int64_t steps) {
  double sum = 0, squares = 0;
  for (int64_t s = 1; s <= steps; ++s) {
    const double ms = jitter.delayS(seed, rank, s) * 1e3;
    sum += ms;
    squares += ms * ms;
  }
  DrawMoments m;
  m.meanMs = sum / static_cast<double>(steps);
  m.sdMs = std::sqrt(squares / static_cast<double>(steps) - m.meanMs * m.meanMs);
  return m;
}

}  // namespace

TEST_CASE("step jitter reads and writes its text", "[run][jitter]") {
  CHECK_FALSE(run::StepJitter::parse("none").active());
  const run::StepJitter normal = run::StepJitter::parse("normal:30:10");
  CHECK(normal.kind == run::StepJitter::Kind::kNormal);
  CHECK(normal.meanMs == 30);
  CHECK(normal.sdMs == 10);
  CHECK(normal.text() == "normal:30:10");
  const run::StepJitter exp = run::StepJitter::parse("exp:2.5");
  CHECK(exp.kind == run::StepJitter::Kind::kExponential);
  CHECK(exp.text() == "exp:2.5");
  CHECK(run::StepJitter::parse(exp.text()).meanMs == 2.5);
  CHECK(run::StepJitter{}.text() == "none");
}

TEST_CASE("step jitter refuses what it cannot draw, naming the flag and the fix", "[run][jitter]") {
  using Catch::Contains;
  const auto refusal = [](const std::string& text) {
    try {
      run::StepJitter::parse(text);
    } catch (const dtbench::common::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refusal("normal:-3"), Contains("--inject-step-jitter") && Contains("normal:MEAN_MS:SD_MS") &&
                                       Contains("'normal:-3'"));
  CHECK_THAT(refusal("normal:-3:1"), Contains("the mean must be > 0"));
  CHECK_THAT(refusal("normal:30:-1"), Contains("the standard deviation must be >= 0"));
  CHECK_THAT(refusal("exp:0"), Contains("the mean must be > 0"));
  CHECK_THAT(refusal("exp:1e9"), Contains("at most 60000 ms"));
  CHECK_THAT(refusal("exp:fast"), Contains("'fast' is not a finite number"));
  CHECK_THAT(refusal("exp:nan"), Contains("is not a finite number"));
  CHECK_THAT(refusal("exp:3:1"), Contains("exp needs its mean alone"));
  CHECK_THAT(refusal("pareto:3"), Contains("unknown distribution 'pareto'"));
  CHECK_THAT(refusal(""), Contains("unknown distribution ''"));
}

TEST_CASE("step jitter draws its stated distribution, per rank, the same on a rerun", "[run][jitter]") {
  const int64_t steps = 20000;
  SECTION("normal") {
    const run::StepJitter jitter = run::StepJitter::parse("normal:30:10");
    const DrawMoments m = momentsOf(jitter, 7, 3, steps);
    // Standard errors: 10/sqrt(20000) = 0.07 ms for the mean, about 0.05 ms for the sd; the clip at 0
    // (3 sd below the mean) moves either by less than 0.01 ms.
    CHECK(m.meanMs == Approx(30).margin(0.3));
    CHECK(m.sdMs == Approx(10).margin(0.3));
  }
  SECTION("exponential: sd = mean, and a tail: P(X > 3 mean) = e^-3") {
    const run::StepJitter jitter = run::StepJitter::parse("exp:20");
    const DrawMoments m = momentsOf(jitter, 7, 0, steps);
    CHECK(m.meanMs == Approx(20).margin(0.6));
    CHECK(m.sdMs == Approx(20).margin(0.8));
    int64_t above = 0;
    for (int64_t s = 1; s <= steps; ++s) above += jitter.delayS(7, 0, s) > 0.060;
    CHECK(static_cast<double>(above) / steps == Approx(std::exp(-3.0)).margin(0.006));
  }
  SECTION("a clipped normal never sleeps a negative time") {
    const run::StepJitter jitter = run::StepJitter::parse("normal:1:5");
    for (int64_t s = 1; s <= 1000; ++s) CHECK(jitter.delayS(1, 0, s) >= 0);
  }
  SECTION("ranks differ, reruns repeat, seeds differ") {
    const run::StepJitter jitter = run::StepJitter::parse("exp:20");
    std::set<double> firstSteps;
    for (int64_t rank = 0; rank < 16; ++rank) firstSteps.insert(jitter.delayS(0, rank, 1));
    CHECK(firstSteps.size() == 16);
    CHECK(jitter.delayS(0, 5, 9) == jitter.delayS(0, 5, 9));
    CHECK(jitter.delayS(0, 5, 9) != jitter.delayS(1, 5, 9));
    CHECK(jitter.delayS(0, 5, 9) != jitter.delayS(0, 5, 10));
    // Two ranks' draws are uncorrelated: the sample correlation of 20000 pairs is within 4 standard errors of 0.
    double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
    for (int64_t s = 1; s <= steps; ++s) {
      const double a = jitter.delayS(0, 0, s), b = jitter.delayS(0, 1, s);
      sa += a, sb += b, sab += a * b, saa += a * a, sbb += b * b;
    }
    const double n = static_cast<double>(steps);
    const double correlation = (sab / n - sa / n * sb / n) /
                               std::sqrt((saa / n - sa / n * sa / n) * (sbb / n - sb / n * sb / n));
    CHECK(std::abs(correlation) < 4 / std::sqrt(n));
  }
  CHECK(run::StepJitter{}.delayS(0, 0, 1) == 0);
}
