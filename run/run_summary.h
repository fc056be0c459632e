#pragma once
// RunSummary: summary.json (docs/run-directory.md), typed once. Rank 0's RunRecorder keeps one and
// rewrites the file as the run goes (trainer/record/run_recorder.h); the report, the sweep, predict
// and dtbench train's own closing lines read it back through readSummaryJson.
//
// What it holds: what the run is (repeated from config.json for a reader of this file alone), when
// it started, resumed, was last written and finished, its outcome (run/run_outcome.h) with the error
// of a failed run or the step an interrupted one stopped after, every finished epoch's figures
// (run/epoch_stats.h), and the parameter checksums of docs/design.md, "Correctness guards".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/epoch_stats.h"
#include "run/run_outcome.h"
#include "run/run_segment.h"

namespace dtbench::run {

struct RunSummary {
  std::string model;
  std::string dataset;
  int64_t worldSize = 1;
  int64_t batchSize = 0;        // per rank
  int64_t globalBatchSize = 0;  // all ranks' together
  std::string sync = "none";    // "none" on one rank
  std::string amp = "off";
  std::optional<double> lossScale;  // --amp fp16's loss scale at the last write; null otherwise
  int64_t skippedSteps = 0;         // --amp fp16's steps skipped for an inf or NaN gradient

  std::optional<double> startedAt;  // Unix seconds
  std::vector<double> resumedAt;    // every --resume's start; absent until the first
  std::optional<double> updatedAt;  // the last write
  std::optional<double> finishedAt;

  std::optional<RunOutcome> status;        // "status"; nullopt: none recorded (read as "unknown")
  std::optional<std::string> error;        // a failed run's error
  std::optional<int64_t> interruptedAtStep;  // an interrupted run's last global step
  std::vector<EpochStats> epochs;          // finished epochs, in order

  std::optional<double> paramChecksum;                 // rank 0's, when the run completed
  std::optional<std::vector<double>> paramChecksums;  // every rank's, with a world

  // "traffic_first_step": the first global step of the launch whose traffic traffic.csv and
  // traffic_timeline.csv hold (they are rewritten by every launch of several ranks that ends: the run's
  // first, or a --resume's); that launch's world is its segment's. Absent: the run's first step (runs
  // written before it was recorded).
  std::optional<int64_t> trafficFirstStep;
  // "traffic_last_step": that launch's last global step, so that the steps of a later launch that wrote no
  // traffic (it failed) are not counted as covered. Absent: through the run's last step.
  std::optional<int64_t> trafficLastStep;

  // Every rank's most memory so far (trainer/record/peak_memory.h), rewritten at each epoch's end: its
  // peak resident set, and on a GPU the caching allocator's peak allocated bytes. Absent in runs written
  // before they were recorded (and the GPU's on the CPU).
  std::optional<std::vector<int64_t>> peakHostBytes;  // "peak_host_bytes"
  std::optional<std::vector<int64_t>> peakGpuBytes;   // "peak_gpu_bytes"

  // "segments": the run's stretches at one world (run/run_segment.h), as config.json lists them, once a
  // --resume changed the world size; empty for a run of one world (worldSize, batchSize and
  // globalBatchSize are the first segment's either way).
  std::vector<RunSegment> segments;

  // The finished epoch `epoch`; nullptr when the summary has none.
  const EpochStats* findEpoch(int64_t epoch) const;
};

nlohmann::json summaryJson(const RunSummary& summary);

// summary.json read back: each key present is read by its own reader, an absent one keeps its
// default (a run written before the key existed), and a value that does not read as its key's
// (a status that names no outcome among them) adds one sentence to `problems` ("summary.json: ...")
// and keeps the default.
RunSummary readSummaryJson(const nlohmann::json& summary, std::vector<std::string>& problems);

// <runDirectory>/summary.json read back (readJsonOrProblem, then readSummaryJson).
RunSummary readSummaryFile(const std::string& runDirectory, std::vector<std::string>& problems);

// How the run in `runDirectory` stands or ended, as its summary.json records it: what `dtbench status` prints
// and scripts ask it for (docs/run-directory.md, "summary.json"). nullopt ("unknown") for a run directory
// without summary.json (a run killed before its first write), or whose summary.json records no outcome.
// Throws std::invalid_argument when `runDirectory` is no directory or holds no run (neither config.json nor
// summary.json), std::runtime_error naming the problem when summary.json cannot be read or its status names
// no outcome.
std::optional<RunOutcome> readRunOutcome(const std::string& runDirectory);

}  // namespace dtbench::run
