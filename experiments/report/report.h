#pragma once
// Report: every section of dtbench report built from the run directories and job traces
// (docs/report.md), in the order they are printed. The runs, their selection and the scaling rows are kept for the figures.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/runs/ceiling.h"
#include "experiments/report/jobs/job_trace.h"
#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_selection.h"
#include "experiments/report/runs/scaling_tables.h"
#include "experiments/report/jobs/cluster_trace_file.h"

namespace dtbench::report {

struct ReportSettings {
  std::vector<std::string> directories;
  std::optional<int> epoch;              // --epoch; nullopt: each run's last
  std::vector<CeilingRow> ceiling;       // --ceiling, read
  std::optional<double> gpuHourPrice;    // --gpu-hour-price
  std::optional<double> targetAccuracy;  // --target-accuracy
  std::vector<std::string> sacctFiles;   // --sacct: also joined with the runs' slurm_job_id
  std::vector<std::string> traceFiles;   // --trace (Helios layout)
  TraceColumnMap traceColumns;           // --trace-columns
};

struct Report {
  std::vector<RunData> runs;
  RunSelection selection;  // points into runs
  std::vector<ScalingRow> scaling;
  std::vector<JobTrace> traces;  // --sacct files, then --trace files
  std::vector<Table> tables;

  Report() = default;
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  const Table& table(const std::string& name) const;  // throws std::out_of_range naming the tables
  std::string preamble() const;                        // the Markdown heading: what was read
};

// Where a table of the report comes from: the runs (every report of run directories), one table per
// run (its name the prefix followed by the run's id), the runs' wire captures, the job traces.
enum class TableSource { kRuns, kEachRun, kWire, kTraces };

struct TableName {
  std::string name;  // Table::name; of a kEachRun table, the prefix ("traffic_matrix_")
  TableSource source;
};

// Every table a report can hold, in the order it prints them: dtbench report --table's names. A
// report whose tables are not all here is a bug (buildReport throws std::logic_error).
const std::vector<TableName>& reportTableNames();

// Whether `name` names a table of reportTableNames() ("traffic_matrix_r1" by its prefix).
bool isReportTable(const std::string& name);

// Throws std::invalid_argument when the directories hold no run (see findRunDirectories); with no
// directory at all the report holds the job-trace tables alone. Throws std::runtime_error naming the
// file and line of a malformed sacct or trace file.
std::unique_ptr<Report> buildReport(const ReportSettings& settings);

}  // namespace dtbench::report
