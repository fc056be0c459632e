#include "experiments/report/report.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "experiments/report/cost_tables.h"
#include "experiments/report/run_tables.h"
#include "experiments/report/traffic_tables.h"
#include "experiments/report/wire_tables.h"

namespace dtbench::report {

const Table& Report::table(const std::string& name) const { return findTable(tables, name); }

std::string Report::preamble() const {
  return "# dtbench report\n\n" + std::to_string(runs.size()) + " run" + (runs.size() == 1 ? "" : "s") + " read, " +
         std::to_string(selection.usable.size()) + " in the tables, " + std::to_string(selection.leftOut.size()) +
         " left out (listed at the end). Definitions: under each table and in docs/report.md.\n\n";
}

std::unique_ptr<Report> buildReport(const ReportSettings& settings) {
  auto report = std::make_unique<Report>();
  report->runs = loadRuns(settings.directories);
  report->selection = selectRuns(report->runs, settings.epoch);
  report->scaling = scalingRows(report->selection);
  std::vector<Table>& t = report->tables;
  t.push_back(timeSpeedupTable(report->scaling));
  t.push_back(computeCommTable(report->scaling));
  t.push_back(bandwidthTable(report->scaling, settings.ceiling));
  t.push_back(trafficTable(report->runs));
  for (Table& matrix : trafficMatrixTables(report->runs)) t.push_back(std::move(matrix));
  for (Table& wire : wireTables(report->runs)) t.push_back(std::move(wire));
  t.push_back(batchTimesTable(report->runs, report->selection, settings.epoch));
  t.push_back(costTable(report->scaling, settings.gpuHourPrice));
  t.push_back(bestConfigurationTable(report->scaling, settings.gpuHourPrice));
  t.push_back(accuracyTable(report->runs, settings.targetAccuracy));
  t.push_back(jobTable(report->runs));
  t.push_back(leftOutTable(report->selection));
  return report;
}

}  // namespace dtbench::report
