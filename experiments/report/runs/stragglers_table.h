#pragma once
// The stragglers table of dtbench report (docs/report.md, "Stragglers"): per usable run, the spread of its
// chosen epoch's step times and compute across steps and across ranks, the rank the others waited for,
// and nccl-tests' noisy flags (runs/step_spread.h, common/sample_spread.h).

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_selection.h"

namespace dtbench::report {

// One row per usable run, in the selection's order. Throws std::runtime_error naming the run's
// batches.csv when a rank lacks a step of the chosen epoch (selectRuns rules that out).
Table stragglersTable(const RunSelection& selection);

}  // namespace dtbench::report
