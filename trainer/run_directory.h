#pragma once
// RunDirectory: writes one run's directory in the format of docs/run-directory.md,
// the contract with every analysis:
//   config.json        full configuration, versions, host, seed (written once, atomically)
//   train_history.log  CSV Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec
//   batches.csv        one StepRecord per (rank, epoch, step)
//   summary.json       per-epoch figures and "status" (rewritten atomically as the run goes)
// CSV rows are buffered and reach the disk at every flush() (the trainer flushes at least once
// per epoch); JSON files are written to a temporary name and renamed, so a reader never sees a
// half-written file. A directory that already holds a run is refused, never overwritten.

#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "comm/traffic/traffic_exchange.h"
#include "trainer/step_record.h"

namespace dtbench::trainer {

// One row of train_history.log. Type "Batch": rank 0's batch loss and train accuracy, Step is
// the global step. Type "Epoch": mean train loss and test accuracy, Step is the epoch's steps.
struct HistoryRow {
  double timestamp = 0;  // Unix seconds
  const char* type = "Batch";
  int64_t epoch = 0;
  int64_t step = 0;
  double loss = 0;
  double accuracy = 0;  // fraction in [0, 1]; NaN when not measured (written as an empty field)
  double imagesPerSec = 0;
};

class RunDirectory {
  struct Reopen {};
  RunDirectory(std::string path, Reopen, int64_t historyBytes, int64_t batchesBytes);

 public:
  // Creates `path` and its parents. Throws std::runtime_error saying what to do when the path
  // cannot be created or written, or already holds a run (config.json or summary.json).
  explicit RunDirectory(std::string path);

  // Reopens the directory of an interrupted run for --resume: config.json must be there; the CSV
  // logs are cut back to the sizes they had at the checkpoint (rows written after it are
  // written again by the resumed run) and appended to.
  static RunDirectory reopen(std::string path, int64_t historyBytes, int64_t batchesBytes);

  const std::string& path() const { return path_; }

  void writeConfig(const nlohmann::json& config) const;
  void writeSummary(const nlohmann::json& summary) const;
  void appendHistory(const HistoryRow& row);
  void appendBatch(const StepRecord& record);
  void appendBatchRows(const std::string& csvRows);  // whole lines, as toCsvRow makes them
  // traffic.csv, and traffic_timeline.csv when some traffic was counted (point-to-point topologies).
  void writeTraffic(const comm::MergedTraffic& traffic) const;
  void flush();
  // Bytes of train_history.log and batches.csv on disk after a flush() (for checkpoints).
  int64_t historyBytes() const;
  int64_t batchesBytes() const;

 private:
  std::string path_;
  std::ofstream history_;
  std::ofstream batches_;
};

// Reads a JSON file; std::runtime_error naming the path when it is missing or malformed.
nlohmann::json readJsonFile(const std::string& path);

// Writes `value` to `path` through a temporary file in the same directory and a rename.
void writeJsonAtomically(const std::string& path, const nlohmann::json& value);

}  // namespace dtbench::trainer
