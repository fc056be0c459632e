#include "experiments/report/run_data.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <system_error>

#include "experiments/report/csv_file.h"

namespace dtbench::report {
namespace fs = std::filesystem;
namespace {

nlohmann::json readJson(const fs::path& file, std::vector<std::string>& problems) {
  std::ifstream in(file);
  if (!in) {
    problems.push_back("no " + file.filename().string());
    return nullptr;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    problems.push_back(file.filename().string() + " is not valid JSON (" + e.what() + ")");
    return nullptr;
  }
}

// Runs `readRows` on `file` when it exists; a missing optional file is not a problem.
template <typename ReadRows>
void readCsv(const fs::path& file, bool required, std::vector<std::string>& problems, ReadRows readRows) {
  if (!fs::exists(file)) {
    if (required) problems.push_back("no " + file.filename().string());
    return;
  }
  try {
    readRows(CsvFile::read(file.string()));
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
}

void readBatches(const CsvFile& f, std::vector<BatchRow>& rows) {
  const size_t rank = f.column("rank"), epoch = f.column("epoch"), step = f.column("step"),
               samples = f.column("samples"), data = f.column("data_s"), h2d = f.column("h2d_s"),
               forward = f.column("forward_s"), backward = f.column("backward_s"), total = f.column("comm_total_s"),
               exposed = f.column("comm_exposed_s"), optimizer = f.column("optimizer_s"), stepS = f.column("step_s"),
               sent = f.column("bytes_sent"), recv = f.column("bytes_recv");
  for (size_t i = 0; i < f.rows(); ++i) {
    BatchRow r;
    r.rank = static_cast<int>(f.integer(i, rank));
    r.epoch = static_cast<int>(f.integer(i, epoch));
    r.step = f.integer(i, step);
    r.samples = f.integer(i, samples);
    r.dataS = f.number(i, data);
    r.h2dS = f.number(i, h2d);
    r.forwardS = f.number(i, forward);
    r.backwardS = f.number(i, backward);
    r.commTotalS = f.number(i, total);
    r.commExposedS = f.number(i, exposed);
    r.optimizerS = f.number(i, optimizer);
    r.stepS = f.number(i, stepS);
    r.bytesSent = f.integer(i, sent);
    r.bytesRecv = f.integer(i, recv);
    rows.push_back(r);
  }
}

void readHistory(const CsvFile& f, std::vector<HistoryRow>& rows) {
  const size_t time = f.column("Timestamp"), type = f.column("Type"), epoch = f.column("Epoch"),
               step = f.column("Step"), loss = f.column("Loss"), accuracy = f.column("Accuracy");
  for (size_t i = 0; i < f.rows(); ++i) {
    HistoryRow r;
    r.timestamp = f.number(i, time);
    r.epochRow = f.text(i, type) == "Epoch";
    r.epoch = static_cast<int>(f.integer(i, epoch));
    r.step = f.integer(i, step);
    r.loss = f.number(i, loss);
    r.accuracy = f.number(i, accuracy);
    rows.push_back(r);
  }
}

void readTraffic(const CsvFile& f, std::vector<TrafficEntry>& rows) {
  const size_t src = f.column("src"), dst = f.column("dst"), bytes = f.column("bytes"), kind = f.column("kind");
  for (size_t i = 0; i < f.rows(); ++i)
    rows.push_back({static_cast<int>(f.integer(i, src)), static_cast<int>(f.integer(i, dst)), f.integer(i, bytes),
                    f.text(i, kind)});
}

void readTimeline(const CsvFile& f, std::vector<TimelineEntry>& rows) {
  const size_t start = f.column("t_start_s"), src = f.column("src"), dst = f.column("dst"), bytes = f.column("bytes");
  for (size_t i = 0; i < f.rows(); ++i)
    rows.push_back({f.number(i, start), static_cast<int>(f.integer(i, src)), static_cast<int>(f.integer(i, dst)),
                    f.integer(i, bytes)});
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

std::string RunData::configText(const char* key, const std::string& fallback) const {
  if (config.is_object() && config.contains(key) && config[key].is_string()) return config[key].get<std::string>();
  return fallback;
}

double RunData::configNumber(const char* key, double fallback) const {
  if (config.is_object() && config.contains(key) && config[key].is_number()) return config[key].get<double>();
  return fallback;
}

bool RunData::configFlag(const char* key, bool fallback) const {
  if (config.is_object() && config.contains(key) && config[key].is_boolean()) return config[key].get<bool>();
  return fallback;
}

std::string RunData::model() const { return configText("model", "?"); }
std::string RunData::dataset() const { return configText("dataset", "?"); }

int RunData::worldSize() const {
  if (config.is_object() && config.contains("world_size") && config["world_size"].is_number_integer())
    return config["world_size"].get<int>();
  return 1;
}

int RunData::batchSize() const {
  if (config.is_object() && config.contains("batch_size") && config["batch_size"].is_number_integer())
    return config["batch_size"].get<int>();
  return 0;
}

RunData loadRun(const std::string& directory) {
  RunData run;
  run.path = directory;
  run.id = fs::path(directory).lexically_normal().filename().string();
  if (run.id.empty()) run.id = fs::path(directory).lexically_normal().parent_path().filename().string();
  const fs::path dir(directory);
  run.config = readJson(dir / "config.json", run.problems);
  run.summary = readJson(dir / "summary.json", run.problems);
  readCsv(dir / "batches.csv", true, run.problems, [&](const CsvFile& f) { readBatches(f, run.batches); });
  readCsv(dir / "train_history.log", true, run.problems, [&](const CsvFile& f) { readHistory(f, run.history); });
  readCsv(dir / "traffic.csv", false, run.problems, [&](const CsvFile& f) { readTraffic(f, run.traffic); });
  readCsv(dir / "traffic_timeline.csv", false, run.problems, [&](const CsvFile& f) { readTimeline(f, run.timeline); });
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
