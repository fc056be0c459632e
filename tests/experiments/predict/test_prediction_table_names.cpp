// Predict's list of tables (experiments/predict/prediction_table_names.h) against the tables its
// builders make: each mode's names are exactly those tables, in the order they print, so that
// --table's help and its check (tests/experiments/cli/test_predict_options.cpp) name every table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "experiments/predict/calibration_tables.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/prediction_table_names.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/step_model.h"
#include "hand_step.h"

using namespace dtbench::predict;

namespace {

std::vector<std::string> namesOf(const std::vector<dtbench::report::Table>& tables) {
  std::vector<std::string> names;
  for (const dtbench::report::Table& t : tables) names.push_back(t.name);
  return names;
}

}  // namespace

TEST_CASE("Predict's list of tables is the tables its builders make", "[predict][tables]") {
  const MeasuredStep run = handMeasuredStep({{"p0", 1 << 16, 4, 0.04}});
  Hardware h;
  h.ranksPerNode = 2;
  h.intra = h.inter = {1e9, 1e-5};
  const StepPrediction four = predictStep(run, h, 4, {}), one = predictStep(run, h, 1, {});
  CHECK(namesOf(predictionTables(run, h, "hw.json", {four}, one)) == predictTableNames(PredictMode::kPrediction));
  CHECK(std::vector<std::string>{comparisonTable({}, summarize({}), "t").name} ==
        predictTableNames(PredictMode::kAllreduce));
  CHECK(predictTableNames(PredictMode::kCalibrate) == std::vector<std::string>{"calibration"});
  // (The --vary tables: test_rate_axis.cpp.) Every name once, each a table of one mode.
  std::vector<std::string> all;
  for (const PredictTableName& table : predictTableNames()) {
    CHECK(isPredictTable(table.name));
    CHECK(std::count(all.begin(), all.end(), table.name) == 0);
    all.push_back(table.name);
  }
  CHECK_FALSE(isPredictTable("rate-axis"));
  CHECK_FALSE(isPredictTable(""));
  const std::string described = describePredictTables();
  for (const std::string& name : all) CHECK_THAT(described, Catch::Contains(name));
  CHECK_THAT(described, Catch::Contains("with --vary rate_axis, crossings"));
}
