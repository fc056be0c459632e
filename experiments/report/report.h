#pragma once
// Report: every section of dtbench report built from the run directories (docs/report.md), in the
// order they are printed. The runs, their selection and the scaling rows are kept for the figures.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/ceiling.h"
#include "experiments/report/report_table.h"
#include "experiments/report/run_data.h"
#include "experiments/report/run_selection.h"
#include "experiments/report/scaling_tables.h"

namespace dtbench::report {

struct ReportSettings {
  std::vector<std::string> directories;
  std::optional<int> epoch;              // --epoch; nullopt: each run's last
  std::vector<CeilingRow> ceiling;       // --ceiling, read
  std::optional<double> gpuHourPrice;    // --gpu-hour-price
  std::optional<double> targetAccuracy;  // --target-accuracy
};

struct Report {
  std::vector<RunData> runs;
  RunSelection selection;  // points into runs
  std::vector<ScalingRow> scaling;
  std::vector<Table> tables;

  Report() = default;
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  const Table& table(const std::string& name) const;  // throws std::out_of_range naming the tables
  std::string preamble() const;                        // the Markdown heading: what was read
};

// Throws std::invalid_argument when the directories hold no run (see findRunDirectories).
std::unique_ptr<Report> buildReport(const ReportSettings& settings);

}  // namespace dtbench::report
