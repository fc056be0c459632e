#pragma once
// RunData: one run directory (docs/run-directory.md) as dtbench report reads it. Loading never
// throws for a damaged run: what could not be read is kept in `problems`, one sentence each, and
// the report lists the run as left out with that reason instead of failing the whole report.
// Damage is anything the format rules out: a file that is not a regular file, a field that is not
// a number, a value out of its range (a NaN, infinite, negative or zero step time, a phase longer
// than its step, a rank outside the world), a (rank, epoch, step) row written twice, a world size
// that is not a count or disagrees with config.json's hosts. A damaged run keeps no rows, so none
// of its numbers reaches a table beside the job table and the runs left out.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/wire/wire_data.h"
#include "run/run_facts.h"

namespace dtbench::report {

struct BatchRow {
  int rank = 0;
  int epoch = 0;
  int64_t step = 0;
  int64_t samples = 0;
  double dataS = 0, h2dS = 0, forwardS = 0, backwardS = 0, commTotalS = 0, commExposedS = 0, optimizerS = 0,
         stepS = 0;  // h2dS, forwardS, backwardS, optimizerS: NaN when the run did not time them (an empty cell)
  int64_t bytesSent = 0, bytesRecv = 0;
};

struct HistoryRow {
  double timestamp = 0;
  bool epochRow = false;  // Type == Epoch
  int epoch = 0;
  int64_t step = 0;
  double loss = 0;
  double accuracy = 0;  // NaN when empty (--no-eval)
};

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

struct RunData {
  std::string path;  // as found
  std::string id;    // the directory's name (its path when two runs share a name)
  nlohmann::json config;   // null without config.json
  // config.json read through the run's schema (run/run_facts.h): its settings, a default where a key
  // is absent, and what the run recorded when it started.
  run::RunConfig settings;
  run::RunFacts facts;
  nlohmann::json summary;  // null without summary.json
  std::vector<BatchRow> batches;
  std::vector<HistoryRow> history;
  std::vector<TrafficEntry> traffic;
  std::vector<TimelineEntry> timeline;
  std::optional<WireData> wire;  // wire/ (docs/wire.md), when the run has one
  std::vector<std::string> problems;

  // summary.json's status, "unknown" without one.
  std::string status() const;
  std::string model() const;
  std::string dataset() const;
  int worldSize() const;  // 1 without world_size, 0 when it is not a count from 1 to INT_MAX
  int batchSize() const;  // 0 without batch_size or when it is not a count
};

RunData loadRun(const std::string& directory);

// Reads run.config (config.json) into run.settings and run.facts, through the run's schema; a value
// that does not read as its key's adds its sentence to run.problems. loadRun does it.
void readConfig(RunData& run);

// The run directories named by `arguments`: a directory holding config.json is a run; any other is
// searched up to four levels deep (checkpoint/ skipped). Sorted by path. Throws
// std::invalid_argument when an argument does not exist or no run is found.
std::vector<std::string> findRunDirectories(const std::vector<std::string>& arguments);

// loadRun over findRunDirectories, ids made unique.
std::vector<RunData> loadRuns(const std::vector<std::string>& arguments);

}  // namespace dtbench::report
