#include <cmath>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include "run/step_record.h"

#include "run/epoch_stats.h"
#include "run/json_values.h"

namespace run = dtbench::run;

using dtbench::run::StepRecord;

TEST_CASE("an epoch adds up its steps", "[epoch_stats]") {
  std::vector<run::StepRecord> steps(2);
  steps[0].samples = 32;
  steps[0].stepS = 1.0;
  steps[0].dataS = 0.25;
  steps[0].forwardS = 0.25;
  steps[0].loss = 2.0;
  steps[0].accuracy = 0.5;
  steps[1].samples = 16;
  steps[1].stepS = 0.5;
  steps[1].dataS = 0.125;
  steps[1].commExposedS = 0.125;
  steps[1].loss = 1.0;
  steps[1].accuracy = 1.0;
  const auto s = dtbench::run::addUp(3, 10, steps);
  CHECK(s.epoch == 3);
  CHECK(s.steps == 2);
  CHECK(s.samples == 48);
  CHECK(s.stepS == 1.5);
  CHECK(s.trainTimeS() == 1.125);               // sum(step_s - data_s)
  CHECK(s.computeS() == 1.0);                   // minus exposed communication
  CHECK(s.meanLoss == 1.5);
  CHECK(s.trainAccuracy == Approx(32.0 / 48));  // weighted by samples: (16 + 16) / 48
  CHECK(s.extrapolated());
  CHECK(s.extrapolatedEpochS() == Approx(1.125 / 2 * 10));
  CHECK(s.imagesPerSec() == Approx(48 / 1.5));

  const auto j = dtbench::run::toJson(s);
  CHECK(j.at("train_time_s") == 1.125);
  CHECK(j.at("extrapolated") == true);
  CHECK(j.at("test_accuracy").is_null());
}

TEST_CASE("a whole epoch is not extrapolated", "[epoch_stats]") {
  std::vector<run::StepRecord> steps(4);
  for (auto& r : steps) r.stepS = 0.5;
  const auto s = dtbench::run::addUp(1, 4, steps);
  CHECK_FALSE(s.extrapolated());
  CHECK(s.extrapolatedEpochS() == s.trainTimeS());
}

TEST_CASE("a diverged epoch's NaN loss survives its JSON round trip", "[epoch_stats]") {
  dtbench::run::EpochStats stats;
  stats.epoch = 2;
  stats.steps = 3;
  stats.meanLoss = std::nan("");
  const nlohmann::json written = nlohmann::json::parse(dtbench::run::toJson(stats).dump());
  CHECK(written.at("train_loss").is_null());
  std::vector<std::string> problems;
  const dtbench::run::EpochStats read = dtbench::run::readEpochStats(written, "", problems, /*complete=*/true);
  CHECK(problems.empty());
  CHECK(std::isnan(read.meanLoss));
  CHECK(read.steps == 3);
  CHECK(std::isnan(dtbench::run::numberValue(nlohmann::json())));
  CHECK(dtbench::run::numberValue(nlohmann::json(2.5)) == 2.5);
}
