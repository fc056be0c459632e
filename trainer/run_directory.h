#pragma once
// RunDirectory: writes one run's directory in the format of DESIGN.md ("The run directory"),
// the contract with every analysis:
//   config.json        full configuration, versions, host, seed (written once, atomically)
//   train_history.log  CSV Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec
//   batches.csv        one StepRecord per (rank, epoch, step)
//   summary.json       per-epoch figures and "status" (rewritten atomically as the run goes)
// CSV rows are buffered and reach the disk at every flush() (the trainer flushes at least once
// per epoch); JSON files are written to a temporary name and renamed, so a reader never sees a
// half-written file. A directory that already holds a run is refused, never overwritten.

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

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
 public:
  // Creates `path` and its parents. Throws std::runtime_error saying what to do when the path
  // cannot be created or written, or already holds a run (config.json or summary.json).
  explicit RunDirectory(std::string path);

  const std::string& path() const { return path_; }

  void writeConfig(const nlohmann::json& config) const;
  void writeSummary(const nlohmann::json& summary) const;
  void appendHistory(const HistoryRow& row);
  void appendBatch(const StepRecord& record);
  void flush();

 private:
  std::string path_;
  std::ofstream history_;
  std::ofstream batches_;
};

// Writes `value` to `path` through a temporary file in the same directory and a rename.
void writeJsonAtomically(const std::string& path, const nlohmann::json& value);

}  // namespace dtbench::trainer
