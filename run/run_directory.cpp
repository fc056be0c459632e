#include "run/run_directory.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "comm/traffic/traffic_recorder.h"
#include "common/atomic_file.h"
#include "common/file_lock.h"

namespace dtbench::run {
namespace fs = std::filesystem;

namespace {

constexpr const char* kLockFile = "dtbench.lock";

std::ofstream openCsv(const fs::path& file, const char* header) {
  std::ofstream out(file, std::ios::out | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + file.string() + ": choose a writable --out");
  out << header << '\n';
  out.flush();
  return out;
}

}  // namespace

void writeJsonAtomically(const std::string& path, const nlohmann::json& value) {
  common::writeFileAtomically(path, [&](std::ostream& out) { out << value.dump(2) << '\n'; });
}

namespace {

common::FileLock lockDirectory(const std::string& dir) {
  const std::string file = (fs::path(dir) / kLockFile).string();
  try {
    return common::FileLock(file);
  } catch (const common::FileLockHeld& held) {
    throw std::runtime_error("run directory " + dir + " is in use by a running dtbench (" + held.owner() +
                             "); wait for that run to end or stop it (then continue it with --resume), or "
                             "choose a new --out");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + ": the run directory must be writable; choose a writable --out");
  }
}

}  // namespace

RunDirectoryLock::RunDirectoryLock(std::string dir) : dir_(std::move(dir)), lock_(lockDirectory(dir_)) {}

bool runDirectoryInUse(const std::string& dir) { return common::FileLock::isHeld((fs::path(dir) / kLockFile).string()); }

bool hasRunDirectoryLock(const std::string& dir) {
  std::error_code error;
  return fs::is_regular_file(fs::path(dir) / kLockFile, error);
}

namespace {

// Creates the directory and takes its lock: a fresh run's first act, before it looks inside.
RunDirectoryLock createAndLock(const std::string& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) {
    throw std::runtime_error("cannot create run directory " + path + ": " + error.message() +
                             "; choose a writable --out");
  }
  return RunDirectoryLock(path);
}

}  // namespace

RunDirectory::RunDirectory(std::string path) : lock_(createAndLock(path)), path_(std::move(path)) {
  const fs::path dir(path_);
  for (const char* name : {"config.json", "summary.json"}) {
    if (fs::exists(dir / name)) {
      throw std::runtime_error("run directory " + path_ + " already holds a run (" + name +
                               "); choose a new --out, or add --resume to continue it if it was interrupted");
    }
  }
  history_ = openCsv(dir / "train_history.log", trainHistoryHeader());
  batches_ = openCsv(dir / "batches.csv", batchesCsvHeader().c_str());
}

RunDirectory RunDirectory::reopen(RunDirectoryLock lock, int64_t historyBytes, int64_t batchesBytes) {
  return RunDirectory(std::move(lock), Reopen{}, historyBytes, batchesBytes);
}

RunDirectory::RunDirectory(RunDirectoryLock lock, Reopen, int64_t historyBytes, int64_t batchesBytes)
    : lock_(std::move(lock)), path_(lock_.directory()) {
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

void RunDirectory::writeTraffic(const std::vector<comm::TrafficRow>& traffic,
                                const std::vector<comm::TimelineRow>& timelineRows) const {
  const fs::path dir(path_);
  std::ofstream out(dir / "traffic.csv");
  comm::writeTrafficCsv(out, traffic);
  if (!out) throw std::runtime_error("cannot write " + (dir / "traffic.csv").string());
  if (timelineRows.empty()) return;
  std::ofstream timeline(dir / "traffic_timeline.csv");
  comm::writeTimelineCsv(timeline, timelineRows);
  if (!timeline) throw std::runtime_error("cannot write " + (dir / "traffic_timeline.csv").string());
}

std::string describeLogPrefixMismatch(const std::string& file, int64_t bytes, int64_t rows) {
  std::ifstream in(file, std::ios::in | std::ios::binary);
  if (!in) return "the file is missing or unreadable";
  std::error_code error;
  const auto size = static_cast<int64_t>(fs::file_size(file, error));
  if (error) return "its size cannot be read (" + error.message() + ")";
  if (bytes > size) return "the file holds only " + std::to_string(size) + " bytes";
  // Count whole lines in the prefix: the header and `rows` rows, the last one ending exactly there.
  int64_t lines = 0;
  char last = '\n';
  std::vector<char> buffer(1 << 16);
  for (int64_t left = bytes; left > 0;) {
    const auto chunk = static_cast<std::streamsize>(std::min<int64_t>(left, static_cast<int64_t>(buffer.size())));
    in.read(buffer.data(), chunk);
    if (in.gcount() != chunk) return "the file cannot be read";
    lines += std::count(buffer.data(), buffer.data() + chunk, '\n');
    last = buffer[static_cast<size_t>(chunk - 1)];
    left -= chunk;
  }
  if (bytes == 0 || last != '\n') return "byte " + std::to_string(bytes) + " is not the end of a line";
  if (lines != rows + 1) {
    return "the first " + std::to_string(bytes) + " bytes hold the header and " + std::to_string(lines - 1) +
           " rows, not " + std::to_string(rows);
  }
  return "";
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

void RunDirectory::writeSummary(const RunSummary& summary) const {
  writeJsonAtomically((fs::path(path_) / "summary.json").string(), summaryJson(summary));
}

void RunDirectory::appendHistory(const HistoryRow& row) { history_ << toCsvRow(row) << '\n'; }

void RunDirectory::appendBatch(const StepRecord& record) { batches_ << toCsvRow(record) << '\n'; }

void RunDirectory::flush() {
  history_.flush();
  batches_.flush();
  if (!history_ || !batches_) {
    throw std::runtime_error("cannot write the CSV logs in " + path_ + ": is the disk full or the directory gone?");
  }
}

}  // namespace dtbench::run
