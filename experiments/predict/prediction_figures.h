#pragma once
// The figures of `dtbench predict --plots DIR` (docs/predict.md, "Output"), as data for the report's
// plots.py (experiments/report/figures.h): the predicted speedup against world size, and per world
// size the predicted compute and exposed communication per epoch; with measured runs of the same
// configuration (--measured), their speedup series and bars beside the predicted ones, from the
// report's own figure data.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/predict/measured_step.h"
#include "experiments/predict/step_model.h"

namespace dtbench::predict {

// `measured`: run directories (or their parents) for the report; empty for predictions alone.
// Throws common::UsageError when a measured directory holds no usable run.
nlohmann::json predictionFigureData(const MeasuredStep& run, const std::vector<StepPrediction>& predictions,
                                    const StepPrediction& baseline, const std::vector<std::string>& measured);

}  // namespace dtbench::predict
