#pragma once
// RunData: one run directory (docs/run-directory.md) as dtbench report reads it, every file through
// run/'s own reader of it, typed (the settings, facts, summary and rows). Loading never throws for a damaged run: what could not be read is kept in `problems`, one sentence each, and
// the report lists the run as left out with that reason instead of failing the whole report.
// Damage is anything the format rules out: a file that is not a regular file, a field that is not
// a number, a value out of its range (a NaN, infinite, negative or zero step time, a phase longer
// than its step, a rank outside the world), a (rank, epoch, step) row written twice, a world size
// that breaks its setting's rule or disagrees with config.json's hosts. A damaged run keeps no rows, so none
// of its numbers reaches a table beside the job table and the runs left out.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/wire/wire_data.h"
#include "run/run_facts.h"
#include "run/run_outcome.h"
#include "run/run_summary.h"
#include "run/step_record.h"
#include "run/traffic_files.h"
#include "run/train_history.h"

namespace dtbench::report {

// How summary.json's error of a run that died without recording its end begins (RunData::diedAfter).
inline constexpr const char* kDiedWithoutEnd = "died without recording its end";

struct RunData {
  std::string path;  // as found
  std::string id;    // the directory's name (its path when two runs share a name)
  bool configRead = false;  // config.json was read (else model and dataset show as "?")
  // config.json read through the run's schema (run/run_facts.h): its settings, a default where a key
  // is absent, and what the run recorded when it started.
  run::RunConfig settings;
  run::RunFacts facts;
  // config.json's "segments" (facts.segments) in words when a --resume changed the world size
  // (docs/run-directory.md), e.g. "N=4 x B=8 from step 1, N=2 x B=16 from step 69"; empty for a run of one
  // world. `settings` hold the first segment's world and batch; the tables take each segment as a run of
  // its own (runs/run_segments.h).
  std::string resized;
  // A segment of a resized run, taken as a run of its own (runs/run_segments.h): "segment 2/3 of RUN, global
  // batch 12", and the whole run; empty and null for a run (or a run of one world).
  std::string segmentLabel;
  const RunData* segmentOf = nullptr;
  run::RunSummary summary;  // summary.json (run/run_summary.h); the status unknown without one
  std::vector<run::StepRecord> batches;
  std::vector<run::HistoryRow> history;
  std::vector<run::TrafficEntry> traffic;
  std::vector<run::TimelineEntry> timeline;
  std::optional<WireData> wire;  // wire/ (docs/wire.md), when the run has one
  std::vector<std::string> problems;
  // Note [A run that died without recording its end] (run/run_directory.h): summary.json said `running`
  // and no process holds the directory's lock. loadRun then records the run as failed with that reason,
  // and this is the last write into its directory (Unix seconds), where its time ended.
  std::optional<double> diedAfter;

  // summary.json's status, "unknown" without one.
  std::string status() const { return run::outcomeText(summary.status); }
  std::string model() const;
  std::string dataset() const;
  int worldSize() const { return settings.worldSize(); }
  // The largest world of its segments (the world of a run of one world): the ranks its rows may name.
  int largestWorldSize() const;
  int64_t batchSize() const { return settings.data.batchSize; }
};

RunData loadRun(const std::string& directory);

// config.json's content `config` into run.configRead, run.settings and run.facts, through the run's
// schema (run/run_facts.h); what does not read adds its sentence to run.problems. loadRun does it.
void readConfig(RunData& run, const nlohmann::json& config);

// The run directories named by `arguments`: a directory holding config.json is a run; any other is
// searched up to four levels deep (checkpoint/ skipped). Sorted by path. Throws
// std::invalid_argument when an argument does not exist or no run is found.
std::vector<std::string> findRunDirectories(const std::vector<std::string>& arguments);

// loadRun over findRunDirectories, ids made unique.
std::vector<RunData> loadRuns(const std::vector<std::string>& arguments);

}  // namespace dtbench::report
