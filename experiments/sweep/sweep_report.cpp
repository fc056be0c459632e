#include "experiments/sweep/sweep_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "common/clock.h"
#include "experiments/report/report.h"
#include "experiments/report/runs/run_tables.h"
#include "experiments/report/report_table.h"
#include "run/run_facts.h"
#include "run/run_outcome.h"

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

const char* kJobTable = "jobs";

void writeFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path);
  out << content;
  if (!out) throw std::runtime_error("dtbench sweep: cannot write " + path.string() + "; check the --out directory");
}

// A job row for an outcome, filled by column name so it follows the report's job table.
std::vector<report::Cell> jobRow(const report::Table& jobs, const PointOutcome& outcome) {
  std::vector<report::Cell> row;
  for (const std::string& column : jobs.columns) {
    if (column == "id") row.push_back(report::Cell::of(outcome.name));
    else if (column == "path") row.push_back(report::Cell::of(outcome.path));
    else if (column == "configuration") row.push_back(report::Cell::of(outcome.configuration));
    else if (column == "ranks") row.push_back(report::Cell::integral(outcome.worldSize));
    else if (column == "start") row.push_back(report::Cell::of(common::utcText(outcome.startedAt)));
    else if (column == "start_unix_s") row.push_back(report::Cell::seconds(outcome.startedAt));
    else if (column == "duration_s") row.push_back(report::Cell::seconds(outcome.seconds));
    else if (column == "state") row.push_back(report::Cell::of(outcome.state()));
    else if (column == "error") row.push_back(report::Cell::of(outcome.error));
    else row.push_back(report::Cell::empty());
  }
  return row;
}

// The column `name` of the job table, or -1.
int columnOf(const report::Table& table, const std::string& name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  return it == table.columns.end() ? -1 : static_cast<int>(it - table.columns.begin());
}

// A run that died without recording its end (run/run_directory.h's Note) is failed in the report's job table
// already (experiments/report/runs/run_data.h); its row here adds the sweep's reason when the run is a point's
// last attempt.
void addPointReasons(report::Table& jobs, const std::vector<PointOutcome>& outcomes) {
  const int path = columnOf(jobs, "path"), error = columnOf(jobs, "error");
  if (path < 0 || error < 0) return;
  for (std::vector<report::Cell>& row : jobs.rows) {
    if (row[error].text.rfind(report::kDiedWithoutEnd, 0) != 0) continue;
    std::error_code ignored;
    for (const PointOutcome& point : outcomes)
      if (!point.error.empty() && fs::equivalent(point.path, fs::path(row[path].text), ignored))
        row[error] = report::Cell::of(row[error].text + "; the sweep: " + point.error);
  }
}

}  // namespace

std::string writeSweepReport(const std::string& outDir, const std::vector<PointOutcome>& outcomes,
                             const std::string& sacctFile) {
  report::ReportSettings settings;
  settings.directories = {outDir};
  if (!sacctFile.empty()) settings.sacctFiles = {sacctFile};
  std::unique_ptr<report::Report> built;
  try {
    built = report::buildReport(settings);
  } catch (const std::invalid_argument&) {
    built.reset();  // no run directory under outDir yet: the job table holds the outcomes alone
  }
  report::Table jobs;
  if (built) {
    jobs = built->table(kJobTable);
  } else {
    jobs.name = kJobTable;
    jobs.title = "Job table";
    jobs.columns = report::jobTableColumns();
  }
  addPointReasons(jobs, outcomes);
  for (const PointOutcome& outcome : outcomes)
    if (outcome.outcome && !run::isComplete(outcome.outcome) && !fs::exists(fs::path(outcome.path) / "config.json"))
      jobs.rows.push_back(jobRow(jobs, outcome));

  writeFile(fs::path(outDir) / "jobs.csv", report::renderCsv(jobs));
  if (!built) {
    writeFile(fs::path(outDir) / "report.md", "# dtbench sweep " + outDir + "\n\nNo run directory under " + outDir +
                                                  " holds a run.\n\n" + report::renderMarkdown({jobs}));
    return "No run to report: every point failed before writing its run directory (see jobs.csv).\n";
  }
  std::vector<report::Table> tables = built->tables;
  for (report::Table& table : tables)
    if (table.name == kJobTable) table = jobs;
  writeFile(fs::path(outDir) / "report.md", built->preamble() + report::renderMarkdown(tables));
  return report::renderMarkdown(
      {built->table("time_speedup"), built->table("compute_comm"), built->table("bandwidth")});
}

}  // namespace dtbench::sweep
