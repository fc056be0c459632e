#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "common/usage_error.h"
#include "dtbench/build_config.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/report_options.h"
#include "experiments/cli/table_output.h"
#include "experiments/report/runs/ceiling.h"
#include "experiments/report/figures.h"
#include "experiments/report/report.h"
#include "experiments/report/report_table.h"
#include "experiments/report/jobs/job_figures.h"
#include "experiments/report/jobs/cluster_trace_file.h"
#include "experiments/cli/output_paths.h"
#include "experiments/report/output_set.h"

namespace dtbench::experiments {
namespace {

namespace fs = std::filesystem;

void writeFile(const std::string& path, const std::string& content, const char* flag) {
  std::ofstream out(path);
  out << content;
  if (!out) throw std::runtime_error(std::string(flag) + ": cannot write " + path);
}

}  // namespace

int runReportCommand(const std::vector<std::string>& args) {
  const ReportOptions o = parseReportOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  if (!o.csvDir.empty()) prepareOutputDirectory(o.csvDir, "--csv-dir");
  if (!o.plotsDir.empty()) prepareOutputDirectory(o.plotsDir, "--plots");
  if (!o.jobTablePath.empty()) checkOutputFile(o.jobTablePath, "--job-table");
  if (!o.jobTablePath.empty() && o.directories.empty())
    throw common::UsageError("--job-table writes the run directories' job table: name a run directory");
  report::ReportSettings settings;
  settings.directories = o.directories;
  settings.epoch = o.epoch;
  settings.gpuHourPrice = o.gpuHourPrice;
  settings.targetAccuracy = o.targetAccuracy;
  if (!o.ceilingPath.empty()) settings.ceiling = report::readCeiling(o.ceilingPath);
  settings.sacctFiles = o.sacctFiles;
  settings.traceFiles = o.traceFiles;
  std::unique_ptr<report::Report> built;
  try {
    settings.traceColumns = report::parseTraceColumnMap(o.traceColumns);
    built = report::buildReport(settings);
  } catch (const std::invalid_argument& e) {
    throw common::UsageError(e.what());
  }
  const report::Report& r = *built;

  printTables(r.tables, o.tables, o.format, r.preamble());

  if (!o.csvDir.empty()) {
    report::OutputSet written(o.csvDir);
    for (const report::Table& table : r.tables) {
      const std::string path = (fs::path(o.csvDir) / (table.name + ".csv")).string();
      writeFile(path, report::renderCsv(table), "--csv-dir");
      written.add(path);
    }
    written.commit();
  }
  if (!o.jobTablePath.empty()) writeFile(o.jobTablePath, report::renderCsv(r.table("jobs")), "--job-table");
  if (!o.plotsDir.empty()) {
    nlohmann::json data = report::figureData(r.runs, r.selection, r.scaling, o.epoch);
    if (!r.traces.empty()) data["traces"] = report::traceFigureData(r.traces);
    const std::vector<std::string> files = report::drawFigures(data, o.plotsDir, DTBENCH_PLOT_PYTHON);
    std::fprintf(stderr, "report: %zu figure files in %s (data: figures.json, redraw: plots.py)\n", files.size(),
                 o.plotsDir.c_str());
  }
  return 0;
}

}  // namespace dtbench::experiments
