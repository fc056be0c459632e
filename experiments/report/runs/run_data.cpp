#include "experiments/report/runs/run_data.h"

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

#include "experiments/report/csv_file.h"
#include "experiments/report/regular_file.h"

namespace dtbench::report {
namespace fs = std::filesystem;
namespace {

nlohmann::json readJson(const fs::path& file, std::vector<std::string>& problems) {
  if (!fs::exists(file)) {
    problems.push_back("no " + file.filename().string());
    return nullptr;
  }
  try {
    std::ifstream in = openRegularFile(file.string());
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    problems.push_back(file.filename().string() + " is not valid JSON (" + e.what() + ")");
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  return nullptr;
}

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
    std::vector<Row> read;
    readRows(CsvFile::read(file.string()), read);
    rows = std::move(read);
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
}

// The longest time one step's field may hold: a year. Longer is no measurement (no job runs that
// long), and sums of such values would overflow to infinity.
constexpr double kLongestStepTimeS = 365.0 * 24 * 3600;

// Checks of single fields against docs/run-directory.md; each throws through CsvFile::fail, naming
// the file, the line and the column. Times are never NaN, infinite, negative or beyond a year.
double seconds(const CsvFile& f, size_t row, size_t column) {
  const double value = f.number(row, column);
  if (!(std::isfinite(value) && value >= 0))
    f.fail(row, column, "'" + f.text(row, column) + "' is not a time (finite seconds, 0 or more)");
  if (value > kLongestStepTimeS)
    f.fail(row, column, "'" + f.text(row, column) + "' is not a step's time (more than a year)");
  return value;
}

int64_t integerFrom(const CsvFile& f, size_t row, size_t column, int64_t least,
                    int64_t most = std::numeric_limits<int64_t>::max()) {
  const int64_t value = f.integer(row, column);
  if (value < least || value > most)
    f.fail(row, column,
           "'" + f.text(row, column) + "' is out of range (" + std::to_string(least) + " to " + std::to_string(most) +
               ")");
  return value;
}

constexpr int64_t kMostInt = std::numeric_limits<int>::max();

void readBatches(const CsvFile& f, std::vector<BatchRow>& rows) {
  const size_t rank = f.column("rank"), epoch = f.column("epoch"), step = f.column("step"),
               samples = f.column("samples"), stepS = f.column("step_s"), sent = f.column("bytes_sent"),
               recv = f.column("bytes_recv");
  // The phases of a step: each is part of step_s.
  const std::pair<double BatchRow::*, size_t> phases[] = {{&BatchRow::dataS, f.column("data_s")},
                                                          {&BatchRow::h2dS, f.column("h2d_s")},
                                                          {&BatchRow::forwardS, f.column("forward_s")},
                                                          {&BatchRow::backwardS, f.column("backward_s")},
                                                          {&BatchRow::commTotalS, f.column("comm_total_s")},
                                                          {&BatchRow::commExposedS, f.column("comm_exposed_s")},
                                                          {&BatchRow::optimizerS, f.column("optimizer_s")}};
  std::map<std::tuple<int, int, int64_t>, size_t> lineOf;  // (rank, epoch, step) -> its first line
  for (size_t i = 0; i < f.rows(); ++i) {
    BatchRow r;
    r.rank = static_cast<int>(integerFrom(f, i, rank, 0, kMostInt - 1));
    r.epoch = static_cast<int>(integerFrom(f, i, epoch, 1, kMostInt));
    r.step = integerFrom(f, i, step, 1);
    r.samples = integerFrom(f, i, samples, 1);
    r.stepS = seconds(f, i, stepS);
    if (!(r.stepS > 0)) f.fail(i, stepS, "'" + f.text(i, stepS) + "' is not a step time (finite seconds, more than 0)");
    for (const auto& [field, column] : phases) {
      // A device phase that was not timed (--phase-timing none) is an empty cell.
      if (field != &BatchRow::dataS && field != &BatchRow::commTotalS && field != &BatchRow::commExposedS &&
          f.text(i, column).empty()) {
        r.*field = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      r.*field = seconds(f, i, column);
      if (r.*field > r.stepS)
        f.fail(i, column,
               "'" + f.text(i, column) + "' is more than the row's step_s " + f.text(i, stepS) +
                   " (every phase is part of its step)");
    }
    r.bytesSent = integerFrom(f, i, sent, 0);
    r.bytesRecv = integerFrom(f, i, recv, 0);
    // A row written twice (a --resume racing a run that was still writing) would count its step twice.
    const auto [first, added] = lineOf.emplace(std::tuple{r.rank, r.epoch, r.step}, f.line(i));
    if (!added)
      f.fail(i, step,
             "rank " + std::to_string(r.rank) + " epoch " + std::to_string(r.epoch) + " step " +
                 std::to_string(r.step) + " again (first at line " + std::to_string(first->second) +
                 "): duplicated rows are not measurements");
    rows.push_back(r);
  }
}

void readHistory(const CsvFile& f, std::vector<HistoryRow>& rows) {
  const size_t time = f.column("Timestamp"), type = f.column("Type"), epoch = f.column("Epoch"),
               step = f.column("Step"), loss = f.column("Loss"), accuracy = f.column("Accuracy");
  for (size_t i = 0; i < f.rows(); ++i) {
    HistoryRow r;
    r.timestamp = f.number(i, time);
    if (!std::isfinite(r.timestamp)) f.fail(i, time, "'" + f.text(i, time) + "' is not a Unix time");
    r.epochRow = f.text(i, type) == "Epoch";
    r.epoch = static_cast<int>(integerFrom(f, i, epoch, 0, kMostInt));
    r.step = integerFrom(f, i, step, 0);
    r.loss = f.number(i, loss);  // NaN or inf when training diverged: a result, not damage
    r.accuracy = f.number(i, accuracy);
    if (!std::isnan(r.accuracy) && !(r.accuracy >= 0 && r.accuracy <= 1))
      f.fail(i, accuracy, "'" + f.text(i, accuracy) + "' is not an accuracy (a fraction in [0, 1], or empty)");
    rows.push_back(r);
  }
}

void readTraffic(const CsvFile& f, std::vector<TrafficEntry>& rows) {
  const size_t src = f.column("src"), dst = f.column("dst"), bytes = f.column("bytes"), kind = f.column("kind");
  for (size_t i = 0; i < f.rows(); ++i)
    rows.push_back({static_cast<int>(integerFrom(f, i, src, 0, kMostInt - 1)),
                    static_cast<int>(integerFrom(f, i, dst, 0, kMostInt - 1)), integerFrom(f, i, bytes, 0),
                    f.text(i, kind)});
}

void readTimeline(const CsvFile& f, std::vector<TimelineEntry>& rows) {
  const size_t start = f.column("t_start_s"), src = f.column("src"), dst = f.column("dst"), bytes = f.column("bytes");
  for (size_t i = 0; i < f.rows(); ++i) {
    const double startS = f.number(i, start);
    if (!std::isfinite(startS)) f.fail(i, start, "'" + f.text(i, start) + "' is not a Unix time");
    rows.push_back({startS, static_cast<int>(integerFrom(f, i, src, 0, kMostInt - 1)),
                    static_cast<int>(integerFrom(f, i, dst, 0, kMostInt - 1)), integerFrom(f, i, bytes, 0)});
  }
}

// config's whole number `key` when it is one from 1 to INT_MAX, 0 when it is something else,
// `absent` without it.
int countIn(const nlohmann::json& config, const char* key, int absent) {
  if (!config.is_object() || !config.contains(key)) return absent;
  const nlohmann::json& value = config[key];
  if (value.is_number_unsigned())
    return value.get<uint64_t>() <= static_cast<uint64_t>(kMostInt) ? value.get<int>() : 0;
  if (value.is_number_integer())
    return value.get<int64_t>() >= 1 && value.get<int64_t>() <= kMostInt ? value.get<int>() : 0;
  return 0;
}

// config.json's fields that size the report's tables: a world size or batch size that is not a
// count, or a world size that disagrees with the hosts the run listed, leaves the run out.
void checkConfig(const fs::path& file, const nlohmann::json& config, std::vector<std::string>& problems) {
  if (!config.is_object()) return;
  for (const char* key : {"world_size", "batch_size"})
    if (countIn(config, key, 1) == 0)
      problems.push_back(file.string() + ": " + key + " " + config[key].dump() +
                         " is not a count (a whole number from 1 to " + std::to_string(kMostInt) + ")");
  const int world = countIn(config, "world_size", 1);
  if (world == 0) return;
  // Every run of several ranks lists every rank's host: the world size's cross-check, which also
  // keeps a mistyped world size from sizing the per-rank tables.
  const bool listed = config.contains("hosts") && config["hosts"].is_array();
  if (world > 1 && !listed)
    problems.push_back(file.string() + ": world_size " + std::to_string(world) +
                       " without a hosts list (a run of several ranks names every rank's host)");
  else if (listed && config["hosts"].size() != static_cast<size_t>(world))
    problems.push_back(file.string() + ": world_size " + std::to_string(world) + " but hosts names " +
                       std::to_string(config["hosts"].size()) + " hosts, one per rank");
}

template <typename Entry>
std::vector<std::pair<int, int>> ranksOf(const std::vector<Entry>& entries) {
  std::vector<std::pair<int, int>> pairs;
  for (const Entry& e : entries) pairs.emplace_back(e.src, e.dst);
  return pairs;
}

// Ranks in the rows beyond the configuration's world size.
void checkRanks(const RunData& run, std::vector<std::string>& problems) {
  const int world = run.worldSize();
  if (world < 1) return;  // already a problem
  const fs::path dir(run.path);
  const std::string ofWorld = " in a world of " + std::to_string(world) + " (config.json's world_size)";
  for (const BatchRow& row : run.batches)
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

std::string RunData::status() const {
  if (summary.is_object() && summary.contains("status") && summary["status"].is_string())
    return summary["status"].get<std::string>();
  return "unknown";
}

std::string RunData::model() const { return config.is_object() && config.contains("model") ? settings.model : "?"; }
std::string RunData::dataset() const {
  return config.is_object() && config.contains("dataset") ? run::datasetNames().name(settings.data.dataset) : "?";
}

int RunData::worldSize() const { return countIn(config, "world_size", 1); }

int RunData::batchSize() const { return countIn(config, "batch_size", 0); }

void readConfig(RunData& run) {
  run::RunRecord record = run::readConfigJson(run.config, run.problems);
  run.settings = std::move(record.settings);
  run.facts = std::move(record.facts);
}

RunData loadRun(const std::string& directory) {
  RunData run;
  run.path = directory;
  run.id = fs::path(directory).lexically_normal().filename().string();
  if (run.id.empty()) run.id = fs::path(directory).lexically_normal().parent_path().filename().string();
  const fs::path dir(directory);
  run.config = readJson(dir / "config.json", run.problems);
  checkConfig(dir / "config.json", run.config, run.problems);
  readConfig(run);
  run.summary = readJson(dir / "summary.json", run.problems);
  readCsv(dir / "batches.csv", true, run.problems, run.batches, readBatches);
  readCsv(dir / "train_history.log", true, run.problems, run.history, readHistory);
  readCsv(dir / "traffic.csv", false, run.problems, run.traffic, readTraffic);
  readCsv(dir / "traffic_timeline.csv", false, run.problems, run.timeline, readTimeline);
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
