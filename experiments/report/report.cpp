#include "experiments/report/report.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "experiments/report/runs/cost_tables.h"
#include "experiments/report/runs/run_tables.h"
#include "experiments/report/jobs/sacct_file.h"
#include "experiments/report/runs/slurm_join.h"
#include "experiments/report/runs/stragglers_table.h"
#include "experiments/report/jobs/job_tables.h"
#include "experiments/report/runs/traffic_tables.h"
#include "experiments/report/wire/wire_section.h"

namespace dtbench::report {

const std::vector<TableName>& reportTableNames() {
  using S = TableSource;
  static const std::vector<TableName> names{
      {"time_speedup", S::kRuns},        {"compute_comm", S::kRuns},
      {"bandwidth", S::kRuns},           {"traffic", S::kRuns},
      {"traffic_matrix_", S::kEachRun},  {"wire_matrix", S::kWire},
      {"wire_flows", S::kWire},          {"burstiness", S::kWire},
      {"reconciliation", S::kWire},      {"reconciliation_summary", S::kWire},
      {"batch_times", S::kRuns},         {"stragglers", S::kRuns},
      {"cost", S::kRuns},                {"best", S::kRuns},
      {"accuracy", S::kRuns},            {"jobs", S::kRuns},
      {"excluded", S::kRuns},            {"trace_jobs", S::kTraces},
      {"job_duration_cdf", S::kTraces},  {"queue_delay_cdf", S::kTraces},
      {"final_states", S::kTraces},      {"gpu_time_by_size", S::kTraces},
      {"trace_skipped", S::kTraces},
  };
  return names;
}

bool isReportTable(const std::string& name) {
  for (const TableName& table : reportTableNames())
    if (table.source == TableSource::kEachRun ? name.rfind(table.name, 0) == 0 && name.size() > table.name.size()
                                              : name == table.name)
      return true;
  return false;
}

namespace {

// The report's tables are reportTableNames()'s, so that --table's list is the whole of them.
void checkRegistered(const std::vector<Table>& tables) {
  for (const Table& table : tables)
    if (!isReportTable(table.name))
      throw std::logic_error("the report's table '" + table.name +
                             "' is missing from reportTableNames() (experiments/report/report.cpp)");
}

}  // namespace

const Table& Report::table(const std::string& name) const { return findTable(tables, name); }

std::string Report::preamble() const {
  std::string traceLine;
  if (!traces.empty())
    traceLine = std::to_string(traces.size()) + " job trace" + (traces.size() == 1 ? "" : "s") +
                " read (sacct and cluster traces: the tables from \"Job traces\" on).\n\n";
  if (runs.empty()) return "# dtbench report\n\n" + traceLine;
  return "# dtbench report\n\n" + std::to_string(runs.size()) + " run" + (runs.size() == 1 ? "" : "s") + " read, " +
         std::to_string(selection.usable.size()) + " in the tables, " + std::to_string(selection.leftOut.size()) +
         " left out (listed at the end). Definitions: under each table and in docs/report.md.\n\n" + traceLine;
}

std::unique_ptr<Report> buildReport(const ReportSettings& settings) {
  auto report = std::make_unique<Report>();
  if (!settings.directories.empty()) report->runs = loadRuns(settings.directories);
  std::set<std::string> jobIds;  // the runs' Slurm jobs: the join of the job table
  for (const RunData& run : report->runs)
    if (const std::string id = slurmJobIdOf(run); !id.empty()) jobIds.insert(id);
  for (const std::string& path : settings.sacctFiles) report->traces.push_back(readSacct(path, jobIds));
  for (const std::string& path : settings.traceFiles)
    report->traces.push_back(readTrace(path, settings.traceColumns));
  std::vector<Table>& t = report->tables;
  if (settings.directories.empty()) {
    t = traceTables(report->traces);
    checkRegistered(t);
    return report;
  }
  report->selection = selectRuns(report->runs, settings.epoch);
  report->scaling = scalingRows(report->selection);
  t.push_back(timeSpeedupTable(report->scaling));
  t.push_back(computeCommTable(report->scaling));
  t.push_back(bandwidthTable(report->scaling, settings.ceiling));
  t.push_back(trafficTable(report->runs));
  for (Table& matrix : trafficMatrixTables(report->runs)) t.push_back(std::move(matrix));
  for (Table& wire : wireTables(report->runs)) t.push_back(std::move(wire));
  t.push_back(batchTimesTable(report->runs, report->selection, settings.epoch));
  t.push_back(stragglersTable(report->selection));
  t.push_back(costTable(report->scaling, settings.gpuHourPrice));
  if (!settings.sacctFiles.empty()) addTimeToResult(t.back(), report->scaling, report->traces);
  t.push_back(bestConfigurationTable(report->scaling, settings.gpuHourPrice));
  t.push_back(accuracyTable(report->runs, settings.targetAccuracy));
  t.push_back(jobTable(report->runs));
  if (!settings.sacctFiles.empty()) addSlurmColumns(t.back(), report->runs, report->traces);
  t.push_back(leftOutTable(report->selection));
  if (!report->traces.empty())
    for (Table& trace : traceTables(report->traces)) t.push_back(std::move(trace));
  checkRegistered(t);
  return report;
}

}  // namespace dtbench::report
