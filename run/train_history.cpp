#include "run/train_history.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace dtbench::run {

const char* trainHistoryHeader() { return "Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec"; }

std::string toCsvRow(const HistoryRow& row) {
  char line[256];
  char accuracy[32] = "";
  if (!std::isnan(row.accuracy)) std::snprintf(accuracy, sizeof accuracy, "%.6f", row.accuracy);
  std::snprintf(line, sizeof line, "%.6f,%s,%lld,%lld,%.6f,%s,%.3f", row.timestamp, row.type == HistoryRowType::kEpoch ? "Epoch" : "Batch",
                static_cast<long long>(row.epoch), static_cast<long long>(row.step), row.loss, accuracy,
                row.imagesPerSec);
  return line;
}

std::vector<HistoryRow> readTrainHistory(const common::CsvFile& f) {
  const size_t time = f.column("Timestamp"), type = f.column("Type"), epoch = f.column("Epoch"),
               step = f.column("Step"), loss = f.column("Loss"), accuracy = f.column("Accuracy");
  const bool hasRate = f.hasColumn("ImagesPerSec");
  const size_t rate = hasRate ? f.column("ImagesPerSec") : 0;
  const auto inRange = [&](size_t row, size_t column, int64_t most) {
    const int64_t value = f.integer(row, column);
    if (value < 0 || value > most)
      f.fail(row, column,
             "'" + f.text(row, column) + "' is out of range (0 to " + std::to_string(most) + ")");
    return value;
  };
  std::vector<HistoryRow> rows;
  for (size_t i = 0; i < f.rows(); ++i) {
    HistoryRow r;
    r.timestamp = f.number(i, time);
    if (!std::isfinite(r.timestamp)) f.fail(i, time, "'" + f.text(i, time) + "' is not a Unix time");
    r.type = f.text(i, type) == "Epoch" ? HistoryRowType::kEpoch : HistoryRowType::kBatch;
    r.epoch = inRange(i, epoch, std::numeric_limits<int>::max());
    r.step = inRange(i, step, std::numeric_limits<int64_t>::max());
    r.loss = f.number(i, loss);  // NaN or inf when training diverged: a result, not damage
    r.accuracy = f.number(i, accuracy);
    if (!std::isnan(r.accuracy) && !(r.accuracy >= 0 && r.accuracy <= 1))
      f.fail(i, accuracy, "'" + f.text(i, accuracy) + "' is not an accuracy (a fraction in [0, 1], or empty)");
    if (hasRate) r.imagesPerSec = f.number(i, rate);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace dtbench::run
