#include "experiments/sweep/sweep_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "common/clock.h"
#include "experiments/report/report.h"
#include "experiments/report/runs/run_tables.h"
#include "experiments/report/report_table.h"

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
