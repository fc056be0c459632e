#pragma once
// RunDirectory: writes one run's directory in the format of docs/run-directory.md, the contract with
// every analysis, through the run's own types of each file (run/: config.json through run_facts.h,
// the rows of train_history.h and step_record.h, summary.json through run_summary.h):
//   config.json        full configuration, versions, host, seed (written once, atomically)
//   train_history.log  CSV Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec
//   batches.csv        one StepRecord per (rank, epoch, step)
//   summary.json       per-epoch figures and "status" (rewritten atomically as the run goes)
// CSV rows are buffered and reach the disk at every flush() (the trainer flushes at least once
// per epoch); JSON files are written to a temporary name and renamed, so a reader never sees a
// half-written file. A directory that already holds a run is refused, never overwritten.
//
// A run directory has one owner: the process that writes it holds an exclusive flock(2) on
// <dir>/dtbench.lock (RunDirectoryLock) from the moment it opens the directory, fresh or for
// --resume, until the RunDirectory is destroyed. A second run or resume into a directory in use is
// refused at once, naming the owner's pid and host. The kernel releases the lock when its process
// ends in any way, SIGKILL included, so a crashed run leaves no stale lock: the file stays behind
// (with the dead owner's pid) and the next opener simply takes it.

#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include <vector>

#include "comm/traffic/traffic_recorder.h"
#include "common/file_lock.h"
#include "run/run_summary.h"
#include "run/step_record.h"
#include "run/train_history.h"

namespace dtbench::run {

// Ownership of a run directory: an exclusive flock(2) on <dir>/dtbench.lock, which also holds the
// owner's pid and host for the message a refused process prints. Released when the object is
// destroyed or the process ends. Move-only.
class RunDirectoryLock {
 public:
  // Takes the lock of the existing directory `dir`. Throws std::runtime_error "<dir> is in use by a
  // running dtbench (pid N, host H) ..." when another process (or another RunDirectoryLock of this
  // one) holds it, and a std::runtime_error naming the file when the lock file cannot be created. On
  // a filesystem without flock support it warns on stderr and owns the directory unchecked.
  explicit RunDirectoryLock(std::string dir);

  const std::string& directory() const { return dir_; }

 private:
  std::string dir_;
  common::FileLock lock_;
};

// runDirectoryInUse: whether a process holds `dir`'s lock now: a run in progress (or a --resume of it); false
// for a directory without the lock file. hasRunDirectoryLock: whether `dir` has the lock file at all (runs
// written before it existed do not). Note [A run that died without recording its end]:
// summary.json says `running` from a run's start until it records its end, and a run killed on the way
// (SIGKILL, the out-of-memory killer, a lost node) never records it; the kernel drops its lock with its
// process, so a `running` run whose lock file no process holds has died. (On a shared filesystem without
// working flock, a run in progress on another node also reads as free.)
bool runDirectoryInUse(const std::string& dir);
bool hasRunDirectoryLock(const std::string& dir);

class RunDirectory {
  struct Reopen {};
  RunDirectory(RunDirectoryLock lock, Reopen, int64_t historyBytes, int64_t batchesBytes);

 public:
  // Creates `path` and its parents and takes its lock. Throws std::runtime_error saying what to do
  // when the path cannot be created or written, is in use by another run, or already holds a run
  // (config.json or summary.json).
  explicit RunDirectory(std::string path);

  // Reopens the directory of an interrupted run for --resume, whose lock the caller took before
  // reading anything in it: config.json must be there; the CSV logs are cut back to the sizes they
  // had at the checkpoint (rows written after it are written again by the resumed run) and
  // appended to.
  static RunDirectory reopen(RunDirectoryLock lock, int64_t historyBytes, int64_t batchesBytes);

  const std::string& path() const { return path_; }

  void writeConfig(const nlohmann::json& config) const;
  void writeSummary(const RunSummary& summary) const;
  void appendHistory(const HistoryRow& row);
  void appendBatch(const StepRecord& record);
  void appendBatchRows(const std::string& csvRows);  // whole lines, as toCsvRow makes them
  // traffic.csv, and traffic_timeline.csv when some traffic was counted (point-to-point topologies).
  void writeTraffic(const std::vector<comm::TrafficRow>& traffic, const std::vector<comm::TimelineRow>& timeline) const;
  void flush();
  // Bytes of train_history.log and batches.csv on disk after a flush() (for checkpoints).
  int64_t historyBytes() const;
  int64_t batchesBytes() const;

 private:
  RunDirectoryLock lock_;
  std::string path_;
  std::ofstream history_;
  std::ofstream batches_;
};

// What is wrong with the first `bytes` bytes of the CSV log `file` as the header line and `rows`
// whole rows after it (what a checkpoint recorded of the log), or "" when nothing is.
std::string describeLogPrefixMismatch(const std::string& file, int64_t bytes, int64_t rows);

// Reads a JSON file; std::runtime_error naming the path when it is missing or malformed.
nlohmann::json readJsonFile(const std::string& path);

// Writes `value` to `path` through a temporary file in the same directory and a rename. On failure
// the temporary file is removed (it may be what filled the disk) and `path` is left as it was.
void writeJsonAtomically(const std::string& path, const nlohmann::json& value);

}  // namespace dtbench::run
