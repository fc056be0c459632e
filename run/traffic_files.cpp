#include "run/traffic_files.h"

#include <cmath>
#include <limits>

namespace dtbench::run {
namespace {

constexpr int64_t kMostRank = std::numeric_limits<int>::max() - 1;

int64_t integerFrom(const common::CsvFile& f, size_t row, size_t column, int64_t least,
                    int64_t most = std::numeric_limits<int64_t>::max()) {
  const int64_t value = f.integer(row, column);
  if (value < least || value > most)
    f.fail(row, column,
           "'" + f.text(row, column) + "' is out of range (" + std::to_string(least) + " to " + std::to_string(most) +
               ")");
  return value;
}

int rankFrom(const common::CsvFile& f, size_t row, size_t column) {
  return static_cast<int>(integerFrom(f, row, column, 0, kMostRank));
}

}  // namespace

std::vector<TrafficEntry> readTrafficCsv(const common::CsvFile& f) {
  const size_t src = f.column("src"), dst = f.column("dst"), bytes = f.column("bytes"), kind = f.column("kind");
  std::vector<TrafficEntry> rows;
  for (size_t i = 0; i < f.rows(); ++i)
    rows.push_back({rankFrom(f, i, src), rankFrom(f, i, dst), integerFrom(f, i, bytes, 0), f.text(i, kind)});
  return rows;
}

std::vector<TimelineEntry> readTimelineCsv(const common::CsvFile& f) {
  const size_t start = f.column("t_start_s"), src = f.column("src"), dst = f.column("dst"), bytes = f.column("bytes");
  std::vector<TimelineEntry> rows;
  for (size_t i = 0; i < f.rows(); ++i) {
    const double startS = f.number(i, start);
    if (!std::isfinite(startS)) f.fail(i, start, "'" + f.text(i, start) + "' is not a Unix time");
    rows.push_back({startS, rankFrom(f, i, src), rankFrom(f, i, dst), integerFrom(f, i, bytes, 0)});
  }
  return rows;
}

}  // namespace dtbench::run
