#pragma once
// A run resized by --resume (config.json's "segments", docs/run-directory.md) as runs of one world each, so
// that the tables show one row per segment (docs/report.md, "Resized runs"): its own N, per-rank and global
// batch, and T from its own steps only. A segment's rows are batches.csv's rows of the run's steps it
// trained (the global step of (epoch, step) counted from summary.json's epochs), its epochs those it trained
// steps of, each with the steps it trained there and, as its full epoch, a whole epoch's steps at its world
// (an epoch it trained part of is extrapolated from its own steps, never from the other segment's).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_selection.h"

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
// The rows of an epoch the run had not finished (an interrupted or failed run: the epoch after summary.json's
// last) go to the segments that trained them as well, their global steps counted on from that last epoch's.
std::vector<RunData> segmentRuns(const RunData& run);

// The seconds each segment of a resized run held its ranks (the job table's GPU time), in order: the first from
// summary.json's started_at, a later one from the --resume that started it (the last resumed_at before its
// first_step_at; its previous_step_at where none is known), each up to the next segment's previous_step_at (the
// last step the run kept of it) or, the last, up to `end`. NaN where a time is unknown. Empty for a run of one
// world.
std::vector<double> segmentHeldSeconds(const RunData& run, double end);

// What the per-run sections that read batches.csv row by row (the batch-time table, the figures' batch times
// and curves) show for `runs`, in order: each run as it is, a resized run one segment at a time: the segments
// `selection` took as runs (a completed run), else its own segmentRuns (a run left out of the tables, not
// damaged), held in `owned`. A damaged run stays whole (its rows are used nowhere).
struct RunViews {
  std::vector<const RunData*> runs;
  std::vector<std::shared_ptr<const RunData>> owned;
};
RunViews runViews(const std::vector<RunData>& runs, const RunSelection& selection);

}  // namespace dtbench::report
