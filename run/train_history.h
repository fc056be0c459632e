#pragma once
// train_history.log (docs/run-directory.md): the CSV users load with pandas for loss and accuracy
// curves, a "Batch" row per step (rank 0's batch loss and train accuracy; Step is the global step)
// and an "Epoch" row per epoch (mean train loss and test accuracy; Step is the epoch's steps).
// Written by the run's RunDirectory and read back by the report through this file's one header.

#include <cstdint>
#include <string>
#include <vector>

#include "common/csv_file.h"

namespace dtbench::run {

// The Type column.
enum class HistoryRowType { kBatch, kEpoch };

struct HistoryRow {
  double timestamp = 0;  // Unix seconds
  HistoryRowType type = HistoryRowType::kBatch;
  int64_t epoch = 0;
  int64_t step = 0;
  double loss = 0;      // NaN or inf once training diverged: a result, not damage
  double accuracy = 0;  // fraction in [0, 1]; NaN when not measured (an empty field)
  double imagesPerSec = 0;
};

const char* trainHistoryHeader();
std::string toCsvRow(const HistoryRow& row);

// train_history.log read back. Throws std::runtime_error (through CsvFile::fail) on a timestamp that
// is not a Unix time, an epoch or step out of range, or an accuracy outside [0, 1].
std::vector<HistoryRow> readTrainHistory(const common::CsvFile& file);

}  // namespace dtbench::run
