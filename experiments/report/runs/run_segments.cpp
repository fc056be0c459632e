#include "experiments/report/runs/run_segments.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "run/run_segment.h"

namespace dtbench::report {

int64_t wholeEpochSteps(int64_t trainSamples, int64_t worldSize, int64_t batchSize, bool dropLast) {
  if (trainSamples <= 0 || worldSize <= 0 || batchSize <= 0) return 0;
  const int64_t share = dropLast ? trainSamples / worldSize : (trainSamples + worldSize - 1) / worldSize;
  return dropLast ? share / batchSize : (share + batchSize - 1) / batchSize;
}

std::vector<RunData> segmentRuns(const RunData& run) {
  const std::vector<run::RunSegment>& segments = run.facts.segments;
  std::vector<RunData> out;
  if (segments.size() < 2) return out;
  // Each finished epoch's first global step and steps (one rank's), in order.
  std::map<int64_t, std::pair<int64_t, int64_t>> epochs;
  int64_t before = 0;
  for (const run::EpochStats& e : run.summary.epochs) {
    epochs[e.epoch] = {before + 1, e.steps};
    before += e.steps;
  }
  // The epoch in progress (a run that did not complete) follows the last finished one.
  const int64_t nextEpoch = run.summary.epochs.empty() ? 1 : run.summary.epochs.back().epoch + 1;
  const auto globalStep = [&epochs, nextEpoch, before](int64_t epoch, int64_t step) -> std::optional<int64_t> {
    if (epoch == nextEpoch) return before + step;
    const auto it = epochs.find(epoch);
    if (it == epochs.end()) return std::nullopt;
    return it->second.first + step - 1;
  };
  const std::string count = std::to_string(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    const run::RunSegment& s = segments[i];
    const int64_t from = s.firstGlobalStep;
    const int64_t to = i + 1 < segments.size() ? segments[i + 1].firstGlobalStep : std::numeric_limits<int64_t>::max();
    const auto inside = [&](std::optional<int64_t> g) { return g && *g >= from && *g < to; };
    RunData v;
    v.path = run.path;
    v.id = run.id + " segment " + std::to_string(i + 1) + "/" + count;
    v.configRead = run.configRead;
    v.settings = run.settings;
    v.settings.comm.connection.worldSize = static_cast<int>(s.worldSize);
    v.settings.data.batchSize = s.batchSize;
    v.settings.optimizer.lr = s.lr;
    v.facts = run.facts;
    v.facts.segments = {s};
    if (s.worldSize != run.worldSize()) {
      v.facts.devices.clear();
      if (v.facts.world) v.facts.world->hosts.clear();
    }
    v.segmentLabel = "segment " + std::to_string(i + 1) + "/" + count + " of " + run.id + ", global batch " +
                     std::to_string(s.globalBatchSize);
    v.segmentOf = &run;
    v.problems = run.problems;
    v.diedAfter = run.diedAfter;
    for (const run::StepRecord& row : run.batches)
      if (inside(globalStep(row.epoch, row.step))) v.batches.push_back(row);
    // The summary: the run's, with the segment's epochs, each its steps of it and a whole epoch at its world.
    v.summary = run.summary;
    v.summary.epochs.clear();
    v.summary.segments.clear();
    v.summary.resumedAt.clear();
    const int64_t whole = wholeEpochSteps(run.facts.trainSamples, s.worldSize, s.batchSize, run.settings.data.dropLast);
    for (const run::EpochStats& e : run.summary.epochs) {
      const auto [first, steps] = epochs.at(e.epoch);
      const int64_t mine = std::max<int64_t>(0, std::min(first + steps, to) - std::max(first, from));
      if (mine == 0) continue;
      run::EpochStats own = e;
      own.steps = mine;
      own.fullEpochSteps = whole > 0 ? whole : e.fullEpochSteps;
      v.summary.epochs.push_back(own);
    }
    std::optional<double> firstAt, lastAt;
    for (const run::HistoryRow& row : run.history) {
      const bool batch = row.type == run::HistoryRowType::kBatch;
      if (batch ? !(row.step >= from && row.step < to) : !v.summary.findEpoch(row.epoch)) continue;
      v.history.push_back(row);
      if (!batch) continue;
      firstAt = firstAt ? std::min(*firstAt, row.timestamp) : row.timestamp;
      lastAt = lastAt ? std::max(*lastAt, row.timestamp) : row.timestamp;
    }
    if (firstAt) {
      v.summary.startedAt = firstAt;
      v.summary.updatedAt = lastAt;
      v.summary.finishedAt = lastAt;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<double> segmentHeldSeconds(const RunData& run, double end) {
  const std::vector<run::RunSegment>& segments = run.facts.segments;
  std::vector<double> held;
  if (segments.size() < 2) return held;
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < segments.size(); ++i) {
    double from = i == 0 ? run.summary.startedAt.value_or(unknown) : segments[i].previousStepAt.value_or(unknown);
    if (i > 0 && segments[i].firstStepAt)
      for (double resumed : run.summary.resumedAt)
        if (resumed <= *segments[i].firstStepAt && (std::isnan(from) || resumed > from)) from = resumed;
    const double to = i + 1 < segments.size() ? segments[i + 1].previousStepAt.value_or(unknown) : end;
    held.push_back(to - from);
  }
  return held;
}

RunViews runViews(const std::vector<RunData>& runs, const RunSelection& selection) {
  RunViews views;
  for (const RunData& run : runs) {
    std::vector<const RunData*> taken;
    for (const std::shared_ptr<const RunData>& segment : selection.segments)
      if (segment->segmentOf == &run) taken.push_back(segment.get());
    if (taken.empty() && run.problems.empty())
      for (RunData& segment : segmentRuns(run)) {
        views.owned.push_back(std::make_shared<const RunData>(std::move(segment)));
        taken.push_back(views.owned.back().get());
      }
    if (taken.empty()) taken.push_back(&run);
    views.runs.insert(views.runs.end(), taken.begin(), taken.end());
  }
  return views;
}

}  // namespace dtbench::report
