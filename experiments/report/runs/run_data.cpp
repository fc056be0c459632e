#include "experiments/report/runs/run_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

#include "common/csv_file.h"
#include "run/run_directory.h"
#include "run/run_outcome.h"
#include "run/json_values.h"
#include "run/settings.h"

namespace dtbench::report {
namespace fs = std::filesystem;
namespace {

// Runs `readRows` on `file` when it exists; a missing optional file is not a problem. A file with a
// bad row gives no rows at all: a run is never reported from part of a file.
template <typename Row, typename ReadRows>
void readCsv(const fs::path& file, bool required, std::vector<std::string>& problems, std::vector<Row>& rows,
             ReadRows readRows) {
  if (!fs::exists(file)) {
    if (required) problems.push_back("no " + file.filename().string());
    return;
  }
  try {
    rows = readRows(common::CsvFile::read(file.string()));
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
}

template <typename Entry>
std::vector<std::pair<int, int>> ranksOf(const std::vector<Entry>& entries) {
  std::vector<std::pair<int, int>> pairs;
  for (const Entry& e : entries) pairs.emplace_back(e.src, e.dst);
  return pairs;
}

// Ranks in the rows beyond the configuration's world size.
void checkRanks(const RunData& run, std::vector<std::string>& problems) {
  // A resized run's rows come from every world it had (config.json's segments).
  const int world = run.largestWorldSize();
  const fs::path dir(run.path);
  const std::string ofWorld = " in a world of " + std::to_string(world) +
                              (run.facts.segments.size() > 1 ? " (the largest of config.json's segments)"
                                                             : " (config.json's world_size)");
  for (const run::StepRecord& row : run.batches)
    if (row.rank >= world) {
      problems.push_back((dir / "batches.csv").string() + " has rows of rank " + std::to_string(row.rank) + ofWorld);
      return;
    }
  for (const auto& [name, pairs] :
       {std::pair{"traffic.csv", ranksOf(run.traffic)}, std::pair{"traffic_timeline.csv", ranksOf(run.timeline)}})
    for (const auto& [src, dst] : pairs)
      if (src >= world || dst >= world) {
        problems.push_back((dir / name).string() + " has bytes from rank " + std::to_string(src) + " to rank " +
                           std::to_string(dst) + ofWorld);
        return;
      }
}

// The packet captures' tables, when the run has a wire/ folder: a bad field there damages the run
// like one in its own files.
void readWireFolder(const fs::path& folder, RunData& run) {
  if (!fs::exists(folder)) return;
  if (!fs::is_directory(folder)) {
    run.problems.push_back(folder.string() + " is not a directory (docs/wire.md)");
    return;
  }
  try {
    run.wire = readWire(folder.string());
  } catch (const std::exception& e) {
    run.problems.push_back(e.what());
  }
}

bool isRun(const fs::path& directory) { return fs::exists(directory / "config.json"); }

void search(const fs::path& directory, int depth, std::vector<std::string>& found) {
  if (isRun(directory)) {
    found.push_back(directory.string());
    return;
  }
  if (depth == 0) return;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    if (!entry.is_directory(error) || entry.path().filename() == "checkpoint") continue;
    search(entry.path(), depth - 1, found);
  }
}

}  // namespace

std::string RunData::model() const { return configRead ? settings.model : "?"; }
std::string RunData::dataset() const { return configRead ? run::datasetNames().name(settings.data.dataset) : "?"; }

void readConfig(RunData& run, const nlohmann::json& config) {
  run.configRead = config.is_object();
  run::RunRecord record = run::readConfigJson(config, run.problems);
  run.settings = std::move(record.settings);
  run.facts = std::move(record.facts);
  if (run.facts.segments.size() > 1) run.resized = run::describeSegments(run.facts.segments);
}

int RunData::largestWorldSize() const {
  int64_t most = worldSize();
  for (const run::RunSegment& s : facts.segments) most = std::max(most, s.worldSize);
  return static_cast<int>(most);
}

namespace {

// The latest modification time of a file in `directory` (Unix seconds); nullopt when none reads.
std::optional<double> lastWrite(const fs::path& directory) {
  std::optional<double> latest;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    struct stat status {};
    if (stat(it->path().c_str(), &status) != 0) continue;
    const double seconds = static_cast<double>(status.st_mtim.tv_sec) + static_cast<double>(status.st_mtim.tv_nsec) / 1e9;
    if (!latest || seconds > *latest) latest = seconds;
  }
  return latest;
}

// Note [A run that died without recording its end] (run/run_directory.h).
void markIfDied(RunData& run) {
  if (!run.summary.status || run::factsOf(*run.summary.status).ended) return;
  if (!run::hasRunDirectoryLock(run.path) || run::runDirectoryInUse(run.path)) return;
  run.summary.status = run::RunOutcome::kFailed;
  run.summary.error = std::string(kDiedWithoutEnd) + " (summary.json still said " +
                      run::outcomeText(run::RunOutcome::kRunning) + " and no process holds its lock: it was killed "
                      "or its node was lost)";
  run.diedAfter = lastWrite(run.path);
}

}  // namespace

RunData loadRun(const std::string& directory) {
  RunData run;
  run.path = directory;
  run.id = fs::path(directory).lexically_normal().filename().string();
  if (run.id.empty()) run.id = fs::path(directory).lexically_normal().parent_path().filename().string();
  const fs::path dir(directory);
  readConfig(run, run::readJsonOrProblem((dir / "config.json").string(), run.problems));
  run.summary = run::readSummaryFile(directory, run.problems);
  markIfDied(run);
  readCsv(dir / "batches.csv", true, run.problems, run.batches, run::readBatchesCsv);
  readCsv(dir / "train_history.log", true, run.problems, run.history, run::readTrainHistory);
  readCsv(dir / "traffic.csv", false, run.problems, run.traffic, run::readTrafficCsv);
  readCsv(dir / "traffic_timeline.csv", false, run.problems, run.timeline, run::readTimelineCsv);
  readWireFolder(dir / "wire", run);
  checkRanks(run, run.problems);
  if (!run.problems.empty()) {
    // Damaged: only the job table and the list of runs left out show it, so that no number of
    // its files reaches a table.
    run.batches.clear();
    run.history.clear();
    run.traffic.clear();
    run.timeline.clear();
    run.wire.reset();
  }
  return run;
}

std::vector<std::string> findRunDirectories(const std::vector<std::string>& arguments) {
  if (arguments.empty()) throw std::invalid_argument("name at least one run directory (or a directory of runs)");
  std::vector<std::string> found;
  for (const std::string& argument : arguments) {
    if (!fs::is_directory(argument))
      throw std::invalid_argument(argument + " is not a directory: name run directories or a directory holding them");
    const size_t before = found.size();
    search(argument, 4, found);
    if (found.size() == before)
      throw std::invalid_argument("no run directory (a directory with config.json) in " + argument);
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

std::vector<RunData> loadRuns(const std::vector<std::string>& arguments) {
  std::vector<RunData> runs;
  for (const std::string& directory : findRunDirectories(arguments)) runs.push_back(loadRun(directory));
  std::map<std::string, int> uses;
  for (const RunData& run : runs) ++uses[run.id];
  for (RunData& run : runs)
    if (uses[run.id] > 1) run.id = fs::path(run.path).lexically_normal().string();
  return runs;
}

}  // namespace dtbench::report
