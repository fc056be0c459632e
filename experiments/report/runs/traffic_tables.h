#pragma once
// The traffic section of dtbench report (docs/report.md, "Traffic"): per run of several ranks with
// traffic.csv, a summary row (kind, flows, totals vs model size and vs the byte model, per-link
// throughput from traffic_timeline.csv) and its source x destination byte matrix.

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

Table trafficTable(const std::vector<RunData>& runs);
// One matrix table per run with traffic (rows: source rank; columns: destination rank).
std::vector<Table> trafficMatrixTables(const std::vector<RunData>& runs);

// The run's src x dst bytes from traffic.csv (counted and modelled together); empty without traffic.
std::vector<std::vector<int64_t>> trafficMatrix(const RunData& run);
// "counted", "modelled", or "counted + modelled".
std::string trafficKind(const RunData& run);

}  // namespace dtbench::report
