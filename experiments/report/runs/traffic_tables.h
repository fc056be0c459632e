#pragma once
// The traffic section of dtbench report (docs/report.md, "Traffic"): per run of several ranks with
// traffic.csv, a summary row (kind, flows, totals vs model size and vs the byte model, per-link
// throughput from traffic_timeline.csv) and its source x destination byte matrix.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

// The launch whose bytes a run's traffic.csv and traffic_timeline.csv hold (summary.json's traffic_first_step,
// docs/run-directory.md): every launch of several ranks that ends rewrites them with its own traffic, so after a
// --resume they are the last such launch's. Its first global step (1: the whole run, also where summary.json does
// not say) and its world (that of the segment that trained the step; the run's world for a run of one world);
// its last global step (traffic_last_step) where batches.csv has rows after it: a later launch that failed,
// which writes no traffic.
struct TrafficLaunch {
  int64_t firstStep = 1;
  std::optional<int64_t> lastStep;  // none: through the run's last row
  int worldSize = 1;
  bool wholeRun() const { return firstStep <= 1 && !lastStep; }
};
TrafficLaunch trafficLaunch(const RunData& run);

// Per run with traffic, its launch's world and steps (trafficLaunch): the byte model over its batches.csv rows
// from that launch's first step on, of ranks of its world.
Table trafficTable(const std::vector<RunData>& runs);
// One matrix table per run with traffic (rows: source rank; columns: destination rank).
std::vector<Table> trafficMatrixTables(const std::vector<RunData>& runs);

// The run's src x dst bytes from traffic.csv (counted and modelled together), over the ranks of its
// traffic's launch (trafficLaunch); empty without traffic.
std::vector<std::vector<int64_t>> trafficMatrix(const RunData& run);
// "counted", "modelled", or "counted + modelled".
std::string trafficKind(const RunData& run);

}  // namespace dtbench::report
