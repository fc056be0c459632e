#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "comm/rank_discovery.h"
#include "common/cluster_file.h"
#include "common/named_values.h"
#include "common/usage_error.h"
#include "dtbench/build_config.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/output_paths.h"
#include "experiments/cli/sweep_options.h"
#include "experiments/cli/train_options.h"
#include "experiments/report/figures.h"
#include "experiments/report/report.h"
#include "experiments/sweep/data_folder.h"
#include "experiments/sweep/local_launcher.h"
#include "experiments/sweep/point_attempts.h"
#include "experiments/sweep/slurm_launcher.h"
#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_report.h"
#include "experiments/sweep/sweep_runner.h"
#include "run/config_schema.h"
#include "run/json_values.h"
#include "run/run_config.h"

namespace dtbench::experiments {
namespace {

// The slurm/ folder with the default job scripts: $DTBENCH_SLURM_DIR, else the sources' own.
std::string slurmScriptDirectory() {
  const char* fromEnvironment = std::getenv("DTBENCH_SLURM_DIR");
  if (fromEnvironment != nullptr && *fromEnvironment != '\0') return fromEnvironment;
  return std::string(DTBENCH_SOURCE_DIR) + "/slurm";
}

// The command that runs (local) or submits (slurm) a point, as a shell would read it.
std::string commandLine(const sweep::GridPoint& point, const sweep::SweepSettings& settings, bool slurm) {
  std::string line;
  if (!slurm) {
    for (const auto& [name, value] : sweep::pointEnvironment(point)) line += name + "=" + sweep::quoted({value}) + " ";
    return line + sweep::quoted(sweep::pointCommand(point, settings));
  }
  const sweep::SbatchSubmission submission = sweep::sbatchSubmission(point, settings);
  for (const auto& [name, value] : submission.environment) line += name + "=" + sweep::quoted({value}) + " ";
  return line + sweep::quoted(submission.command);
}

int dryRun(const std::vector<sweep::GridPoint>& points, const sweep::SweepSettings& settings, bool slurm) {
  std::printf("dtbench sweep --dry-run: %zu point%s in %s (nothing is run)\n", points.size(),
              points.size() == 1 ? "" : "s", settings.outDir.c_str());
  if (slurm && sweep::pointsRunOneAtATime(settings.slurm))
    std::printf("the points share one machine (the emulated cluster, %s): each job after the first is submitted with "
                "--dependency=afterany:<the job before it>; --allow-overlap lets them run together\n",
                common::kClusterVariable);
  for (const sweep::GridPoint& point : points) {
    const std::string path = (std::filesystem::path(settings.outDir) / point.name).string();
    const std::optional<run::RunOutcome> state = sweep::directoryState(path);
    const std::string action = run::isComplete(state)                   ? "skip (completed)"
                               : !std::filesystem::exists(path)          ? (slurm ? "submit" : "run")
                               : slurm && sweep::resumesRun(path, state) ? "submit, continuing its checkpoint"
                                                                         : "move the " + run::outcomeText(state) +
                                                                               " attempt aside, " +
                                                                               (slurm ? "submit" : "run") + " again";
    std::printf("%-40s %s\n  %s\n", point.name.c_str(), action.c_str(), commandLine(point, settings, slurm).c_str());
  }
  return 0;
}

// The launcher's variables of rank 0 of a point's world: `dtbench launch -n N` (the local launcher: one
// emulated host of N ranks) or a Slurm job's tasks (hosts by their names).
comm::Environment rankZeroOf(const sweep::GridPoint& point, bool slurm) {
  if (point.worldSize <= 1) return {};
  const std::string world = std::to_string(point.worldSize);
  comm::Environment env{{"RANK", "0"}, {"WORLD_SIZE", world}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"},
                        {"MASTER_PORT", "29500"}};
  if (!slurm) env["DTBENCH_RANKS_PER_HOST"] = world;
  return env;
}

// Before anything runs: every point's train flags parsed and checked as its `dtbench train` will (its
// rank 0), so that a mistyped flag or value is one usage error, not a failed directory per point; its
// data folder holding its dataset (sweep/data_folder.h), so that a missing dataset is one usage error,
// not a failed point after each job's wait in the queue; and a point whose run completed earlier, with
// other settings than this sweep gives it (the sweep would skip it and report the old run), is
// refused, naming the settings.
void checkPoints(const std::vector<sweep::GridPoint>& points, const sweep::SweepSettings& settings, bool slurm) {
  std::vector<std::string> changed;
  std::vector<std::pair<std::string, run::DataConfig>> toRun;  // the points that will run, and their data
  for (const sweep::GridPoint& point : points) {
    const std::string path = (std::filesystem::path(settings.outDir) / point.name).string();
    std::vector<std::string> words = settings.trainFlags;
    words.insert(words.end(), point.trainFlags.begin(), point.trainFlags.end());
    words.insert(words.end(), {"--out", path});
    TrainCommandLine train;
    try {
      train = parseTrainOptions(words, rankZeroOf(point, slurm));
    } catch (const common::UsageError& e) {
      throw common::UsageError("point " + point.name + ": " + e.what() + " (the train flags after '--' and the grid's; " +
                               "nothing was run)");
    }
    if (!run::isComplete(sweep::directoryState(path))) {
      toRun.emplace_back(point.name, run::resolveDefaults(train.config).data);
      continue;
    }
    std::vector<std::string> problems;
    const nlohmann::json recorded = run::readJsonOrProblem(path + "/config.json", problems);
    const std::string changes = run::describeRunChanges(recorded, run::resolveDefaults(train.config));
    if (!changes.empty()) changed.push_back(point.name + ": " + changes);
  }
  if (!changed.empty()) {
    std::string list;
    for (const std::string& c : changed) list += "\n  " + c;
    throw common::UsageError(settings.outDir + " holds completed runs made with other settings than this sweep gives " +
                             "them; it would skip them and report the old runs:" + list +
                             "\nGive the flags they were made with to continue that sweep, or another --out for this one");
  }
  std::set<std::tuple<run::DatasetKind, std::string, bool>> checked;  // each data folder once
  for (const auto& [name, data] : toRun) {
    if (!checked.emplace(data.dataset, data.dir, data.download).second) continue;
    try {
      sweep::checkDataFolder(data);
    } catch (const common::UsageError& e) {
      throw common::UsageError("point " + name + ": " + e.what());
    }
  }
}

// The report's figures of every run under the sweep's directory (dtbench report DIR --plots PLOTS).
void drawSweepFigures(const std::string& outDir, const std::string& plotsDir) {
  report::ReportSettings settings;
  settings.directories = {outDir};
  std::unique_ptr<report::Report> built;
  try {
    built = report::buildReport(settings);
  } catch (const std::invalid_argument&) {
    std::fprintf(stderr, "dtbench sweep: --plots: no run under %s to draw\n", outDir.c_str());
    return;
  }
  const nlohmann::json data = report::figureData(built->runs, built->selection, built->scaling, std::nullopt);
  const std::vector<std::string> files = report::drawFigures(data, plotsDir, DTBENCH_PLOT_PYTHON);
  std::printf("dtbench sweep: %zu figure files in %s (data: figures.json, redraw: plots.py)\n", files.size(),
              plotsDir.c_str());
}

}  // namespace

int runSweepCommand(const std::vector<std::string>& args) {
  const SweepOptions o = parseSweepOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  const std::vector<sweep::GridPoint> points = sweep::expandGrid(o.grid, o.ranksPerNode);
  sweep::SweepSettings settings;
  settings.outDir = o.outDir;
  settings.trainFlags = o.trainFlags;
  settings.retries = o.retries;
  settings.executable = std::filesystem::read_symlink("/proc/self/exe").string();
  settings.slurm.script = o.slurmScript;
  settings.slurm.scriptDirectory = slurmScriptDirectory();
  settings.slurm.sbatchArgs = o.sbatchArgs;
  settings.slurm.timeoutSeconds = o.slurmTimeout;
  settings.slurm.gpuType = o.gpuType;
  settings.slurm.constraint = o.constraint;
  settings.slurm.allowOverlap = o.allowOverlap;
  settings.slurm.minNodes = o.minNodes;
  const bool slurm = o.launcher == Launcher::kSlurm;
  checkPoints(points, settings, slurm);
  // What the launchers would refuse, refused before one takes DIR's lock, so that a refused sweep
  // leaves nothing behind in DIR (and before --dry-run prints a point).
  if (slurm && !o.dryRun)
    sweep::checkSubmissions(points, settings);
  else if (slurm)
    for (const sweep::GridPoint& point : points) sweep::slurmScript(point, settings);
  else
    for (const sweep::GridPoint& point : points) sweep::pointEnvironment(point);
  if (o.dryRun) return dryRun(points, settings, slurm);
  if (!o.plotsDir.empty()) prepareOutputDirectory(o.plotsDir, "--plots");  // before any point runs

  std::vector<sweep::PointOutcome> outcomes;
  int stopSignal = 0;
  {
    std::unique_ptr<sweep::SweepRunner> runner;
    if (slurm)
      runner = std::make_unique<sweep::SlurmLauncher>(settings);
    else
      runner = std::make_unique<sweep::LocalLauncher>(settings);
    std::printf("dtbench sweep: %zu point%s in %s, launcher %s (logs: <name>.log)\n", points.size(),
                points.size() == 1 ? "" : "s", o.outDir.c_str(),
                launcherNames().name(o.launcher));
    std::fflush(stdout);
    outcomes = runner->run(points, stdout);
    stopSignal = runner->stopSignal();
  }

  std::vector<std::string> unfinished;
  for (const sweep::PointOutcome& outcome : outcomes)
    // Points that did not complete, but for those a stop signal interrupted: the same command continues them.
    if (!run::isComplete(outcome.outcome) && !(run::isContinuable(outcome.outcome) && stopSignal != 0))
      unfinished.push_back(outcome.name + " (" + outcome.state() + ": " + outcome.error + ")");
  // A Slurm sweep's accounting (DIR/sacct.txt, written by the launcher when Slurm keeps accounting).
  const std::string sacct = (std::filesystem::path(o.outDir) / "sacct.txt").string();
  const std::string tables =
      sweep::writeSweepReport(o.outDir, outcomes, slurm && std::filesystem::exists(sacct) ? sacct : "");
  std::printf("\n%s\n", tables.c_str());
  std::printf("dtbench sweep: %s/jobs.csv (job table), %s/report.md (every table)\n", o.outDir.c_str(),
              o.outDir.c_str());
  if (!o.plotsDir.empty()) drawSweepFigures(o.outDir, o.plotsDir);
  if (stopSignal != 0) {
    std::fprintf(stderr, "dtbench sweep: stopped by %s after %zu of %zu points; the same command continues it\n",
                 strsignal(stopSignal), outcomes.size(), points.size());
    return 128 + stopSignal;
  }
  if (!unfinished.empty()) {
    std::fprintf(stderr, "dtbench sweep: %zu of %zu points did not complete:\n", unfinished.size(), points.size());
    for (const std::string& line : unfinished) std::fprintf(stderr, "  %s\n", line.c_str());
    return 1;
  }
  return 0;
}

}  // namespace dtbench::experiments
