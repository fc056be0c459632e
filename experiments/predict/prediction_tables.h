#pragma once
// The predicted tables of `dtbench predict` (docs/predict.md, "Output"): what the prediction assumed
// (the compute's origin and device, the hardware's, the backend's efficiency), Tables 1–3 in the report's
// columns (docs/report.md), one row per world size, every row's `basis` = `predicted`, plus the
// per-step breakdown (one row per world size and collective), what limits scaling (scaling_limits.h) and
// the inputs the prediction used.
// Rendered by the report's renderers (Markdown, CSV, JSON).

#include <vector>

#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/step_model.h"
#include "experiments/report/report_table.h"

namespace dtbench::predict {

// `predictions` in world order; the world-1 baseline (step = compute) gives the speedups.
std::vector<report::Table> predictionTables(const MeasuredStep& run, const Hardware& hardware,
                                            const std::string& hardwarePath, const std::vector<StepPrediction>& predictions,
                                            const StepPrediction& baseline);

}  // namespace dtbench::predict
