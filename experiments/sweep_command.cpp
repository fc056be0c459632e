#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/commands.h"
#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_report.h"
#include "experiments/sweep/sweep_runner.h"
#include "experiments/sweep_options.h"

namespace dtbench::experiments {
namespace {

std::string commandLine(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

int dryRun(const std::vector<sweep::GridPoint>& points, const sweep::SweepSettings& settings) {
  std::printf("dtbench sweep --dry-run: %zu points in %s (nothing is run)\n", points.size(), settings.outDir.c_str());
  for (const sweep::GridPoint& point : points) {
    const std::string path = (std::filesystem::path(settings.outDir) / point.name).string();
    const std::string state = sweep::directoryState(path);
    const std::string action = state == "completed" ? "skip (completed)"
                               : state.empty()      ? "run"
                                                    : "move the " + state + " attempt aside, run again";
    std::printf("%-40s %s\n  %s\n", point.name.c_str(), action.c_str(),
                commandLine(sweep::pointCommand(point, settings)).c_str());
  }
  return 0;
}

}  // namespace

int runSweepCommand(const std::vector<std::string>& args) {
  const SweepOptions o = parseSweepOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  const std::vector<sweep::GridPoint> points = sweep::expandGrid(o.grid);
  sweep::SweepSettings settings;
  settings.outDir = o.outDir;
  settings.trainFlags = o.trainFlags;
  settings.retries = o.retries;
  settings.executable = std::filesystem::read_symlink("/proc/self/exe").string();
  if (o.dryRun) return dryRun(points, settings);

  std::vector<sweep::PointOutcome> outcomes;
  int stopSignal = 0;
  {
    sweep::SweepRunner runner(settings);
    std::printf("dtbench sweep: %zu points in %s (logs: <name>.log)\n", points.size(), o.outDir.c_str());
    std::fflush(stdout);
    for (const sweep::GridPoint& point : points) {
      if ((stopSignal = runner.stopSignal()) != 0) break;
      outcomes.push_back(runner.run(point, stdout));
    }
    if (stopSignal == 0) stopSignal = runner.stopSignal();
  }

  std::vector<std::string> failed;
  for (const sweep::PointOutcome& outcome : outcomes)
    if (outcome.state == "failed") failed.push_back(outcome.name + " (" + outcome.error + ")");
  const std::string tables = sweep::writeSweepReport(o.outDir, outcomes);
  std::printf("\n%s\n", tables.c_str());
  std::printf("dtbench sweep: %s/jobs.csv (job table), %s/report.md (every table)\n", o.outDir.c_str(),
              o.outDir.c_str());
  if (stopSignal != 0) {
    std::fprintf(stderr, "dtbench sweep: stopped by %s after %zu of %zu points; the same command continues it\n",
                 strsignal(stopSignal), outcomes.size(), points.size());
    return 128 + stopSignal;
  }
  if (!failed.empty()) {
    std::fprintf(stderr, "dtbench sweep: %zu of %zu points failed:\n", failed.size(), points.size());
    for (const std::string& line : failed) std::fprintf(stderr, "  %s\n", line.c_str());
    return 1;
  }
  return 0;
}

}  // namespace dtbench::experiments
