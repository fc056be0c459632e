// StepProfile (step_profile.json's content) on hand-worked cases: the warm-up step left out unless
// it is alone, medians of odd and even counts, gradients that were not produced, the bounded
// sample of a long run, and the JSON's keys.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/step_profile.h"

namespace run = dtbench::run;

using dtbench::run::ProfiledParameter;
using dtbench::run::StepProfile;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

run::StepProfile twoParameters() {
  return run::StepProfile({{"conv1.weight", 150, "float32", {6, 1, 5, 5}}, {"fc.bias", 10, "float32", {}}});
}

}  // namespace

TEST_CASE("the profile leaves the warm-up out and takes medians", "[step_profile]") {
  run::StepProfile profile = twoParameters();
  CHECK(profile.steps() == 0);
  profile.add(9.0, {8.0, 1.0});  // warm-up: slow, left out
  CHECK(profile.steps() == 1);
  profile.add(0.5, {0.4, 0.1});
  profile.add(0.7, {0.6, 0.2});
  profile.add(0.6, {0.5, 0.3});
  CHECK(profile.steps() == 3);
  nlohmann::json j = profile.toJson(0);
  CHECK(j.at("rank") == 0);
  CHECK(j.at("steps") == 3);
  CHECK(j.at("backward_s").get<double>() == 0.6);
  REQUIRE(j.at("parameters").size() == 2);
  CHECK(j.at("parameters")[0] == nlohmann::json{{"name", "conv1.weight"},
                                                {"elements", 150},
                                                {"dtype", "float32"},
                                                {"shape", {6, 1, 5, 5}},
                                                {"ready_s", 0.5}});
  CHECK_FALSE(j.at("parameters")[1].contains("shape"));  // not known: left out
  // Read back: the shape where it was written, none where it was not; a shape that does not make the
  // parameter's elements is refused by name.
  const run::ProfiledStep read = run::readStepProfile(j);
  CHECK(read.parameters[0].shape == std::vector<int64_t>{6, 1, 5, 5});
  CHECK(read.parameters[1].shape.empty());
  nlohmann::json wrong = j;
  wrong["parameters"][0]["shape"] = {6, 5, 4};
  CHECK_THROWS_WITH(run::readStepProfile(wrong), Catch::Contains("parameters[0].shape"));
  CHECK(j.at("parameters")[1].at("ready_s").get<double>() == 0.2);

  profile.add(0.8, {0.7, 0.4});  // four steps: the mean of the middle two
  j = profile.toJson(0);
  CHECK(j.at("steps") == 4);
  CHECK(j.at("backward_s").get<double>() == Approx(0.65));
  CHECK(j.at("parameters")[0].at("ready_s").get<double>() == Approx(0.55));
  CHECK(j.at("parameters")[1].at("ready_s").get<double>() == Approx(0.25));
}

TEST_CASE("a lone warm-up step is the profile and gradients never produced are null", "[step_profile]") {
  run::StepProfile profile = twoParameters();
  profile.add(0.3, {0.2, kNaN});
  nlohmann::json j = profile.toJson(1);
  CHECK(j.at("rank") == 1);
  CHECK(j.at("steps") == 1);
  CHECK(j.at("backward_s").get<double>() == 0.3);
  CHECK(j.at("parameters")[0].at("ready_s").get<double>() == 0.2);
  CHECK(j.at("parameters")[1].at("ready_s").is_null());

  // A gradient missing in some steps: the median of the steps that produced it.
  profile.add(0.3, {0.2, kNaN});
  profile.add(0.3, {0.2, 0.125});
  CHECK(profile.toJson(0).at("parameters")[1].at("ready_s").get<double>() == 0.125);
  CHECK_THROWS_AS(profile.add(0.3, {0.2}), std::invalid_argument);
}

TEST_CASE("a long run keeps an evenly spaced sample of its steps", "[step_profile]") {
  run::StepProfile profile({{"w", 1, "float32"}});
  profile.add(100.0, {100.0});  // warm-up
  // Step k's backward_s is k: after 3 x kMaxKeptSteps steps the sample is every 4th step (0, 4, 8,
  // ...), whose median is that of all steps, give or take the stride.
  const int64_t n = 3 * static_cast<int64_t>(run::StepProfile::kMaxKeptSteps);
  for (int64_t k = 0; k < n; ++k) profile.add(static_cast<double>(k), {static_cast<double>(k) / 1000});
  const nlohmann::json j = profile.toJson(0);
  CHECK(j.at("steps") == n);
  CHECK(j.at("backward_s").get<double>() == Approx(static_cast<double>(n - 1) / 2).margin(4));
  CHECK(j.at("parameters")[0].at("ready_s").get<double>() == Approx(static_cast<double>(n - 1) / 2000).margin(0.004));
}
