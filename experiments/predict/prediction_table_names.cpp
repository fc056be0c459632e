#include "experiments/predict/prediction_table_names.h"

#include "common/lists.h"

namespace dtbench::predict {

const std::vector<PredictTableName>& predictTableNames() {
  using M = PredictMode;
  static const std::vector<PredictTableName> names{
      {"assumed", M::kPrediction},
      {"time_speedup", M::kPrediction},
      {"compute_comm", M::kPrediction},
      {"bandwidth", M::kPrediction},
      {"step_breakdown", M::kPrediction},
      {"limits", M::kPrediction},
      {"prediction_inputs", M::kPrediction},
      {"rate_axis", M::kVary},
      {"crossings", M::kVary},
      {"allreduce_model", M::kAllreduce},
      {"calibration", M::kCalibrate},
  };
  return names;
}

std::vector<std::string> predictTableNames(PredictMode mode) {
  std::vector<std::string> names;
  for (const PredictTableName& table : predictTableNames())
    if (table.mode == mode) names.push_back(table.name);
  return names;
}

bool isPredictTable(const std::string& name) {
  for (const PredictTableName& table : predictTableNames())
    if (table.name == name) return true;
  return false;
}

const char* predictModeFlag(PredictMode mode) {
  switch (mode) {
    case PredictMode::kVary: return "--vary";
    case PredictMode::kAllreduce: return "--allreduce";
    case PredictMode::kCalibrate: return "--calibrate";
    default: return "";
  }
}

std::string describePredictTables() {
  std::string text;
  for (const PredictMode mode :
       {PredictMode::kPrediction, PredictMode::kVary, PredictMode::kAllreduce, PredictMode::kCalibrate}) {
    if (!text.empty()) text += std::string("; with ") + predictModeFlag(mode) + " ";
    text += common::joinList(predictTableNames(mode), ", ");
  }
  return text;
}

}  // namespace dtbench::predict
