#pragma once
// The figures of `dtbench predict --plots DIR` (docs/predict.md, "Output"), as data for the report's
// plots.py (experiments/report/figures.h): the predicted speedup against world size, and per world
// size the predicted compute and exposed communication per epoch and the terms of the predicted step
// (`limits`, drawn by limits_figure.h); with measured runs of the same configuration (--measured),
// their speedup series and bars beside the predicted ones, from the report's own figure data. Legends
// name the hardware file the prediction is for.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/predict/measured_step.h"
#include "experiments/predict/step_model.h"

namespace dtbench::predict {

// `hardware` names the machine in the predicted series' legends ("on dgx-a100-hdr200"). `measured`: run
// directories (or their parents) for the report; empty for predictions alone. What of them is not
// drawn (runs the report leaves out, series of another model or batch) is added to `leftOut`, one line
// each with the reason. Throws common::UsageError when a measured directory holds no run.
nlohmann::json predictionFigureData(const MeasuredStep& run, const std::string& hardware,
                                    const std::vector<StepPrediction>& predictions, const StepPrediction& baseline,
                                    const std::vector<std::string>& measured, std::vector<std::string>& leftOut);

}  // namespace dtbench::predict
