#pragma once
// traffic.csv and traffic_timeline.csv of a run directory (docs/run-directory.md) read back. They are
// written by comm/traffic/traffic_recorder.h's writeTrafficCsv and writeTimelineCsv, whose rows the
// run directory (and dtbench allreduce's output) share.

#include <cstdint>
#include <string>
#include <vector>

#include "common/csv_file.h"

namespace dtbench::run {

struct TrafficEntry {
  int src = 0, dst = 0;
  int64_t bytes = 0;
  std::string kind;  // counted | modelled
};

struct TimelineEntry {
  double startS = 0;  // Unix seconds of the 10 ms bin
  int src = 0, dst = 0;
  int64_t bytes = 0;
};

// Each throws std::runtime_error (through CsvFile::fail) on a rank or byte count out of range, or a
// bin start that is not a Unix time.
std::vector<TrafficEntry> readTrafficCsv(const common::CsvFile& file);
std::vector<TimelineEntry> readTimelineCsv(const common::CsvFile& file);

}  // namespace dtbench::run
