#pragma once
// StepSpread: how one epoch's steps of one run vary, across steps and across ranks, and which rank the
// others waited for (docs/report.md, "Stragglers"). From the epoch's batches.csv rows of every rank.
//
// Two quantities per row (rank r, step s): the step, x = step_s, and its compute, x = forward_s +
// backward_s (the phases a rank spends alone, before its gradients can be summed). For each:
// - over every (r, s): p50, p99, CV % and max/p50 (common/sample_spread.h);
// - across ranks, per step s: the gap g_s = max_r x_{r,s} − min_r x_{r,s} and the ranks' CV % c_s; the
//   median and the maximum of g_s over the steps, the median of c_s.
// The last to finish backward in step s: the rank with the largest data_s + h2d_s + forward_s +
// backward_s, the time from the start of its step to the end of its backward (the moment its last
// gradient bucket is ready, which every other rank's all-reduce waits for; the ranks start a step
// together, as the previous step's all-reduce released them). A step where several ranks tie for last
// (within a nanosecond, batches.csv's resolution) counts for none. The straggler is the rank last most
// often (the lowest on a tie), its share = its count / steps.
// One rank has no rank-to-rank spread: the across-rank fields are none and `noRankSpread` says why. Phases
// not timed (--phase-timing none, NaN) leave the compute and the last to finish none likewise.
//
// Worked example (2 ranks, 2 steps; compute = forward + backward, data and h2d 0):
//   rank 0: step_s 1.0, 1.2, compute 0.6, 0.8;  rank 1: step_s 1.0, 1.4, compute 0.7, 0.6.
//   step gaps 0 and 0.2: median 0.1, max 0.2; compute gaps 0.1, 0.2; last to finish backward: rank 1 in
//   step 1 (0.7 > 0.6), rank 0 in step 2 (0.8 > 0.6): one each, straggler rank 0 (lowest), share 0.5.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sample_spread.h"
#include "run/step_record.h"

namespace dtbench::report {

struct QuantitySpread {
  common::SampleSpread overall;          // over every rank's every step
  std::optional<double> rankCvPctP50;    // median over steps of the ranks' CV % in the step
  std::optional<double> gapP50S, gapMaxS;  // max − min across ranks in one step: median, max over steps
};

struct StepSpread {
  int ranks = 0;
  int64_t steps = 0;  // rows per rank
  QuantitySpread step;
  std::optional<QuantitySpread> compute;  // none when forward_s or backward_s was not timed
  // Per rank, the steps in which it alone was the last to finish backward; empty with one rank or untimed phases.
  std::vector<int64_t> lastToFinish;
  int64_t tiedSteps = 0;  // steps in which several ranks tied for last
  std::optional<int> stragglerRank;
  std::optional<double> stragglerShare;
  std::string noRankSpread;  // why there is no rank-to-rank spread ("one rank"), "" when there is
  std::string noStraggler;   // why there is no straggler (one rank, phases not timed), "" when there is one
};

// The spread of `rows`: one epoch's rows of every rank 0 … worldSize−1, the same steps on each.
// Throws std::runtime_error naming `source` (the batches.csv path) when a rank lacks a step another
// rank has, or a rank is outside the world, and std::invalid_argument when there are no rows.
StepSpread stepSpread(const std::vector<const run::StepRecord*>& rows, int worldSize, const std::string& source);

// "r1 3, r0 1" (ranks by count, most first; at most 8, then "+K more ranks"), then ", tied 2" when
// steps tied: the last to finish backward in words.
std::string describeLastToFinish(const StepSpread& spread);

}  // namespace dtbench::report
