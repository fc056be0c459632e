#pragma once
// The per-run sections of dtbench report (docs/report.md): runs left out of the tables, batch
// times, accuracy and the job table. Every run found appears in the job table; the others list the
// runs their rows allow.

#include <optional>
#include <vector>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_selection.h"

namespace dtbench::report {

Table leftOutTable(const RunSelection& selection);
// `epoch`: --epoch (nullopt: each run's chosen epoch, or the last epoch in its batches.csv).
Table batchTimesTable(const std::vector<RunData>& runs, const RunSelection& selection, std::optional<int> epoch);
Table accuracyTable(const std::vector<RunData>& runs, std::optional<double> targetAccuracy);
Table jobTable(const std::vector<RunData>& runs);
// The job table's columns, in order (the sweep fills rows of points without a run directory by name).
const std::vector<std::string>& jobTableColumns();

// The epoch batchTimesTable uses for `run`, and its rows (every rank); empty when it has none.
std::vector<const run::StepRecord*> batchRowsOf(const RunData& run, const RunSelection& selection, std::optional<int> epoch,
                                         int* chosenEpoch = nullptr);

}  // namespace dtbench::report
