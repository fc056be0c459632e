#include "experiments/report/runs/run_epoch.h"

#include "common/sample_spread.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

#include "experiments/report/runs/compressed_steps.h"

namespace dtbench::report {
namespace {

std::string statusReason(const RunData& run) {
  std::string reason = "status " + run.status();
  if (run.summary.error) reason += ": " + *run.summary.error;
  if (run.summary.interruptedAtStep) reason += " at step " + std::to_string(*run.summary.interruptedAtStep);
  return reason;
}

std::string joinRanks(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text.empty() ? "none" : text;
}

}  // namespace

double RunEpoch::wallS() const {
  double most = 0;
  for (const RankSums& r : ranks) most = std::max(most, r.stepS);
  return most * scale;
}

double RunEpoch::imagesPerS() const {
  int64_t samples = 0;
  double most = 0;
  for (const RankSums& r : ranks) {
    samples += r.samples;
    most = std::max(most, r.stepS);
  }
  return most > 0 ? static_cast<double>(samples) / most : 0;
}

int finishedEpochs(const RunData& run) { return static_cast<int>(run.summary.epochs.size()); }

std::optional<double> RunEpoch::extrapolationHalfWidthS() const {
  if (!extrapolated || steps < 2) return std::nullopt;
  const RankSums& r = ranks[critical];
  const double n = static_cast<double>(steps), mean = r.trainS / n;
  const double variance = std::max(0.0, (r.trainSquares - n * mean * mean) / (n - 1));
  const double population = std::sqrt(std::max(0.0, 1 - n / static_cast<double>(fullSteps)));
  return static_cast<double>(fullSteps) * common::studentT95(steps - 1) * std::sqrt(variance / n) * population;
}

EpochSelection selectEpoch(const RunData& run, std::optional<int> wanted) {
  EpochSelection selection;
  if (!run.problems.empty()) {
    selection.reason = run.problems.front();
    return selection;
  }
  if (!run::isComplete(run.summary.status)) {
    selection.reason = statusReason(run);
    return selection;
  }
  const int finished = finishedEpochs(run);
  const int epoch = wanted.value_or(finished);
  const run::EpochStats* summary = run.summary.findEpoch(epoch);
  if (summary == nullptr) {
    selection.reason = "no epoch " + std::to_string(epoch) + " (the run has " + std::to_string(finished) + ")";
    return selection;
  }
  // A --resume at another world size: its epochs' rows come from several worlds, and N, B and T(N) would
  // mix them (docs/run-directory.md, "segments"); selectRuns takes such a run segment by segment
  // (runs/run_segments.h), each a run of one world.
  if (!run.resized.empty()) {
    selection.reason = "resized: a --resume changed its world size (config.json's segments: " + run.resized +
                       "); the tables take runs of one world";
    return selection;
  }
  const int world = run.worldSize();
  RunEpoch e;
  e.epoch = epoch;
  e.ranks.assign(world, RankSums{});
  std::map<int64_t, double> slowest;
  for (const run::StepRecord& row : run.batches) {
    if (row.epoch != epoch) continue;
    if (row.rank < 0 || row.rank >= world) {
      selection.reason = "batches.csv has a row of rank " + std::to_string(row.rank) + " in a world of " +
                         std::to_string(world);
      return selection;
    }
    RankSums& r = e.ranks[row.rank];
    ++r.steps;
    r.samples += row.samples;
    r.trainS += row.stepS - row.dataS;
    r.trainSquares += (row.stepS - row.dataS) * (row.stepS - row.dataS);
    r.stepS += row.stepS;
    r.dataS += row.dataS;
    r.commTotalS += row.commTotalS;
    r.commExposedS += row.commExposedS;
    r.bytesSent += row.bytesSent;
    if (stepCompressed(run, row)) ++r.compressedSteps;
    slowest[row.step] = std::max(slowest[row.step], row.stepS);
    if (row.rank == 0) e.rank0StepS.push_back(row.stepS);
    e.allStepS.push_back(row.stepS);
    e.allDataS.push_back(row.dataS);
  }
  std::vector<int> present;
  for (int r = 0; r < world; ++r)
    if (e.ranks[r].steps > 0) present.push_back(r);
  if (static_cast<int>(present.size()) != world) {
    std::vector<int> all;
    for (int r = 0; r < world; ++r) all.push_back(r);
    selection.reason = "batches.csv has epoch " + std::to_string(epoch) + " rows for ranks " + joinRanks(present) +
                       " of " + joinRanks(all);
    return selection;
  }
  for (int r = 1; r < world; ++r) {
    if (e.ranks[r].steps != e.ranks[0].steps) {
      selection.reason = "ranks differ in steps: rank 0 " + std::to_string(e.ranks[0].steps) + ", rank " +
                         std::to_string(r) + " " + std::to_string(e.ranks[r].steps);
      return selection;
    }
  }
  e.steps = e.ranks[0].steps;
  // summary.json's `steps` counts one rank's steps of the epoch: rows per rank. More rows than steps
  // are rows written twice or left over from an earlier attempt; fewer are rows lost.
  if (summary->steps != e.steps) {
    selection.reason = "batches.csv has " + std::to_string(e.steps) + " epoch " + std::to_string(epoch) +
                       " rows per rank, summary.json says the epoch had " + std::to_string(summary->steps) + " steps";
    return selection;
  }
  // A summary written before full_epoch_steps was recorded reads 0: the epoch was whole.
  e.fullSteps = summary->fullEpochSteps > 0 ? summary->fullEpochSteps : e.steps;
  if (e.fullSteps < e.steps) {
    selection.reason = "summary.json epoch " + std::to_string(epoch) + ": full_epoch_steps " +
                       std::to_string(summary->fullEpochSteps) + " is not a step count of at least its " +
                       std::to_string(e.steps) + " steps";
    return selection;
  }
  if (e.fullSteps > e.steps) {
    e.extrapolated = true;
    e.scale = static_cast<double>(e.fullSteps) / static_cast<double>(e.steps);
  }
  for (int r = 1; r < world; ++r)
    if (e.ranks[r].trainS > e.ranks[e.critical].trainS) e.critical = r;
  for (const auto& [step, value] : slowest) e.slowestStepS.push_back(value);
  selection.epoch = std::move(e);
  return selection;
}

}  // namespace dtbench::report
