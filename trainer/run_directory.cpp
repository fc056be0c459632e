#include "trainer/run_directory.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "comm/traffic/traffic_recorder.h"

namespace dtbench::trainer {
namespace fs = std::filesystem;

namespace {

std::ofstream openCsv(const fs::path& file, const char* header) {
  std::ofstream out(file, std::ios::out | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + file.string() + ": choose a writable --out");
  out << header << '\n';
  out.flush();
  return out;
}

}  // namespace

void writeJsonAtomically(const std::string& path, const nlohmann::json& value) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::out | std::ios::trunc);
    out << value.dump(2) << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + temporary + ": is the disk full or the directory gone?");
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + error.message());
}

RunDirectory::RunDirectory(std::string path) : path_(std::move(path)) {
  const fs::path dir(path_);
  for (const char* name : {"config.json", "summary.json"}) {
    if (fs::exists(dir / name)) {
      throw std::runtime_error("run directory " + path_ + " already holds a run (" + name +
                               "); choose a new --out or move the old run away");
    }
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    throw std::runtime_error("cannot create run directory " + path_ + ": " + error.message() +
                             "; choose a writable --out");
  }
  history_ = openCsv(dir / "train_history.log", "Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec");
  batches_ = openCsv(dir / "batches.csv", batchesCsvHeader());
}

RunDirectory RunDirectory::reopen(std::string path, int64_t historyBytes, int64_t batchesBytes) {
  return RunDirectory(std::move(path), Reopen{}, historyBytes, batchesBytes);
}

RunDirectory::RunDirectory(std::string path, Reopen, int64_t historyBytes, int64_t batchesBytes)
    : path_(std::move(path)) {
  const fs::path dir(path_);
  if (!fs::exists(dir / "config.json"))
    throw std::runtime_error("--resume " + path_ + ": no run there (config.json is missing); give the --out of the "
                             "interrupted run");
  const std::pair<const char*, int64_t> logs[] = {{"train_history.log", historyBytes}, {"batches.csv", batchesBytes}};
  for (const auto& [name, bytes] : logs) {
    std::error_code error;
    const auto size = fs::file_size(dir / name, error);
    if (error || static_cast<int64_t>(size) < bytes)
      throw std::runtime_error("--resume " + path_ + ": " + name + " is shorter than at the checkpoint; the run "
                               "directory was changed after it, so the run cannot be continued exactly");
    fs::resize_file(dir / name, static_cast<uintmax_t>(bytes), error);
    if (error) throw std::runtime_error("--resume: cannot cut " + (dir / name).string() + ": " + error.message());
  }
  history_.open(dir / "train_history.log", std::ios::out | std::ios::app);
  batches_.open(dir / "batches.csv", std::ios::out | std::ios::app);
  if (!history_ || !batches_) throw std::runtime_error("--resume: cannot append to the CSV logs in " + path_);
}

int64_t RunDirectory::historyBytes() const {
  return static_cast<int64_t>(fs::file_size(fs::path(path_) / "train_history.log"));
}

int64_t RunDirectory::batchesBytes() const {
  return static_cast<int64_t>(fs::file_size(fs::path(path_) / "batches.csv"));
}

void RunDirectory::writeTraffic(const comm::MergedTraffic& traffic) const {
  const fs::path dir(path_);
  std::ofstream out(dir / "traffic.csv");
  comm::writeTrafficCsv(out, traffic.traffic);
  if (!out) throw std::runtime_error("cannot write " + (dir / "traffic.csv").string());
  if (traffic.timeline.empty()) return;
  std::ofstream timeline(dir / "traffic_timeline.csv");
  comm::writeTimelineCsv(timeline, traffic.timeline);
  if (!timeline) throw std::runtime_error("cannot write " + (dir / "traffic_timeline.csv").string());
}

nlohmann::json readJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + " is not valid JSON (" + e.what() + ")");
  }
}

void RunDirectory::appendBatchRows(const std::string& csvRows) { batches_ << csvRows; }

void RunDirectory::writeConfig(const nlohmann::json& config) const {
  writeJsonAtomically((fs::path(path_) / "config.json").string(), config);
}

void RunDirectory::writeSummary(const nlohmann::json& summary) const {
  writeJsonAtomically((fs::path(path_) / "summary.json").string(), summary);
}

void RunDirectory::appendHistory(const HistoryRow& row) {
  char line[256];
  char accuracy[32] = "";
  if (!std::isnan(row.accuracy)) std::snprintf(accuracy, sizeof accuracy, "%.6f", row.accuracy);
  std::snprintf(line, sizeof line, "%.6f,%s,%lld,%lld,%.6f,%s,%.3f\n", row.timestamp, row.type,
                static_cast<long long>(row.epoch), static_cast<long long>(row.step), row.loss, accuracy,
                row.imagesPerSec);
  history_ << line;
}

void RunDirectory::appendBatch(const StepRecord& record) { batches_ << toCsvRow(record) << '\n'; }

void RunDirectory::flush() {
  history_.flush();
  batches_.flush();
  if (!history_ || !batches_) {
    throw std::runtime_error("cannot write the CSV logs in " + path_ + ": is the disk full or the directory gone?");
  }
}

}  // namespace dtbench::trainer
