#pragma once
// The tables of `dtbench predict --vary` (docs/predict.md, "A hardware number varied"): `rate_axis`,
// one row per world, value of the varied number and configuration (the predicted step, T, speedup,
// efficiency and what limits it), and `crossings`, per world and pair of configurations the value at
// which their predicted steps are equal (rate_axis.h, findCrossings), or that there is none in the range.

#include <string>
#include <vector>

#include "experiments/predict/rate_axis.h"
#include "experiments/predict/step_model.h"
#include "experiments/report/report_table.h"

namespace dtbench::predict {

struct AxisPredictions {
  RateAxis axis;
  std::vector<int> worlds;
  std::vector<std::string> configurations;  // one label each, e.g. "compress fp16"
  // [configuration][value][world], in the orders of `configurations`, axis.values and `worlds`.
  std::vector<std::vector<std::vector<StepPrediction>>> steps;
  std::vector<std::vector<StepPrediction>> baselines;  // [configuration][value]: world 1, for the speedup
};

// {rate_axis, crossings}. Throws std::invalid_argument when the sizes of `p` do not agree.
std::vector<report::Table> rateAxisTables(const AxisPredictions& p);

}  // namespace dtbench::predict
