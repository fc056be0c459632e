#pragma once
// A run resized by --resume (config.json's "segments", docs/run-directory.md) as runs of one world each, so
// that the tables show one row per segment (docs/report.md, "Resized runs"): its own N, per-rank and global
// batch, and T from its own steps only. A segment's rows are batches.csv's rows of the run's steps it
// trained (the global step of (epoch, step) counted from summary.json's epochs), its epochs those it trained
// steps of, each with the steps it trained there and, as its full epoch, a whole epoch's steps at its world
// (an epoch it trained part of is extrapolated from its own steps, never from the other segment's).

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

// A whole epoch's steps at `worldSize` ranks of `batchSize` over `trainSamples` samples (data/sampler.h's
// share, drop-last or padded; --max-steps not applied).
int64_t wholeEpochSteps(int64_t trainSamples, int64_t worldSize, int64_t batchSize, bool dropLast);

// One RunData per segment of `run` (in order) when it has more than one; empty otherwise. Each holds its
// segment's world, per-rank batch and learning rate as its settings, `segmentLabel` and `segmentOf` set,
// its id "<id> segment 2/3"; its steps' rows, history and epochs as above; its held interval
// (summary.json's started_at to finished_at) from its first to its last step's history row; no traffic
// or wire tables (they are the whole run's), and, at a world other than the first, no devices or hosts
// (config.json records the first world's).
std::vector<RunData> segmentRuns(const RunData& run);

}  // namespace dtbench::report
