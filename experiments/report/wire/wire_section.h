#pragma once
// The wire section of dtbench report (docs/report.md, "The wire"): for runs with a wire/ folder
// (docs/wire.md), the network study's tables from the packet captures beside what dtbench counted.
// Runs without wire/ contribute no rows; the tables are built only when some run has one, so a
// report of runs without captures is what it was before.

#include <vector>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

// wire_matrix, wire_flows, burstiness, reconciliation and reconciliation_summary; none when no run
// has wire data.
std::vector<Table> wireTables(const std::vector<RunData>& runs);

Table wireMatrixTable(const std::vector<RunData>& runs);
Table wireFlowsTable(const std::vector<RunData>& runs);
Table burstinessTable(const std::vector<RunData>& runs);
Table reconciliationTable(const std::vector<RunData>& runs);
Table reconciliationSummaryTable(const std::vector<RunData>& runs);

}  // namespace dtbench::report
