#include "experiments/report/runs/step_spread.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

namespace dtbench::report {
namespace {

constexpr size_t kLastToFinishListed = 8;
// Ends of backward within a nanosecond (batches.csv's resolution) are a tie: the sum of four rounded phases
// differs from another's in its last binary digits where the decimal times are equal.
constexpr double kTieS = 1e-9;

// The table of one epoch: per step (in step order), per rank, its row.
using StepGrid = std::vector<std::vector<const run::StepRecord*>>;

StepGrid gridOf(const std::vector<const run::StepRecord*>& rows, int worldSize, const std::string& source) {
  std::map<int64_t, std::vector<const run::StepRecord*>> bySteps;
  for (const run::StepRecord* row : rows) {
    if (row->rank < 0 || row->rank >= worldSize)
      throw std::runtime_error(source + ": epoch " + std::to_string(row->epoch) + " step " +
                               std::to_string(row->step) + " has rank " + std::to_string(row->rank) +
                               ", outside the world of " + std::to_string(worldSize));
    auto& ranks = bySteps[row->step];
    ranks.resize(static_cast<size_t>(worldSize), nullptr);
    ranks[static_cast<size_t>(row->rank)] = row;
  }
  StepGrid grid;
  for (auto& [step, ranks] : bySteps) {
    for (size_t r = 0; r < ranks.size(); ++r)
      if (ranks[r] == nullptr)
        throw std::runtime_error(source + ": epoch " + std::to_string(rows.front()->epoch) + " step " +
                                 std::to_string(step) + " has no row for rank " + std::to_string(r) +
                                 "; every rank must have the same steps");
    grid.push_back(std::move(ranks));
  }
  return grid;
}

double computeOf(const run::StepRecord& row) { return row.forwardS + row.backwardS; }
double stepOf(const run::StepRecord& row) { return row.stepS; }
double backwardEndOf(const run::StepRecord& row) { return row.dataS + row.h2dS + row.forwardS + row.backwardS; }

template <typename Value>
QuantitySpread quantitySpread(const StepGrid& grid, Value value, const std::string& what) {
  QuantitySpread spread;
  std::vector<double> all, gaps, rankCvs;
  for (const std::vector<const run::StepRecord*>& ranks : grid) {
    std::vector<double> step;
    for (const run::StepRecord* row : ranks) step.push_back(value(*row));
    all.insert(all.end(), step.begin(), step.end());
    if (ranks.size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(step.begin(), step.end());
    gaps.push_back(*hi - *lo);
    if (const common::SampleSpread s = common::sampleSpread(step, what); s.cvPct) rankCvs.push_back(*s.cvPct);
  }
  spread.overall = common::sampleSpread(all, what);
  if (!gaps.empty()) {
    spread.gapP50S = common::sampleQuantile(gaps, 0.5, what);
    spread.gapMaxS = *std::max_element(gaps.begin(), gaps.end());
  }
  if (!rankCvs.empty()) spread.rankCvPctP50 = common::sampleQuantile(rankCvs, 0.5, what);
  return spread;
}

bool phasesTimed(const StepGrid& grid) {
  for (const auto& ranks : grid)
    for (const run::StepRecord* row : ranks)
      if (!std::isfinite(row->h2dS) || !std::isfinite(row->forwardS) || !std::isfinite(row->backwardS)) return false;
  return true;
}

}  // namespace

StepSpread stepSpread(const std::vector<const run::StepRecord*>& rows, int worldSize, const std::string& source) {
  if (rows.empty()) throw std::invalid_argument(source + ": no rows of the epoch; a spread needs at least one step");
  const StepGrid grid = gridOf(rows, worldSize, source);
  StepSpread spread;
  spread.ranks = worldSize;
  spread.steps = static_cast<int64_t>(grid.size());
  spread.step = quantitySpread(grid, stepOf, source + " step_s");
  const bool timed = phasesTimed(grid);
  if (timed) spread.compute = quantitySpread(grid, computeOf, source + " forward_s + backward_s");
  if (worldSize < 2) {
    spread.noRankSpread = "one rank";
    spread.noStraggler = "one rank";
    return spread;
  }
  if (!timed) {
    spread.noStraggler = "phases not timed";
    return spread;
  }
  spread.lastToFinish.assign(static_cast<size_t>(worldSize), 0);
  for (const std::vector<const run::StepRecord*>& ranks : grid) {
    std::vector<double> ends;
    for (const run::StepRecord* row : ranks) ends.push_back(backwardEndOf(*row));
    const auto latest = std::max_element(ends.begin(), ends.end());
    const auto atLatest =
        std::count_if(ends.begin(), ends.end(), [&](double end) { return end >= *latest - kTieS; });
    if (atLatest == 1)
      ++spread.lastToFinish[static_cast<size_t>(latest - ends.begin())];
    else
      ++spread.tiedSteps;
  }
  const auto most = std::max_element(spread.lastToFinish.begin(), spread.lastToFinish.end());
  if (*most == 0) {
    spread.noStraggler = "every step tied";
    return spread;
  }
  spread.stragglerRank = static_cast<int>(most - spread.lastToFinish.begin());
  spread.stragglerShare = static_cast<double>(*most) / static_cast<double>(spread.steps);
  return spread;
}

std::string describeLastToFinish(const StepSpread& spread) {
  std::vector<std::pair<int64_t, int>> ranks;  // (count, rank)
  for (size_t r = 0; r < spread.lastToFinish.size(); ++r)
    if (spread.lastToFinish[r] > 0) ranks.emplace_back(spread.lastToFinish[r], static_cast<int>(r));
  std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (size_t i = 0; i < ranks.size() && i < kLastToFinishListed; ++i)
    text += (text.empty() ? "" : ", ") + ("r" + std::to_string(ranks[i].second)) + " " + std::to_string(ranks[i].first);
  if (ranks.size() > kLastToFinishListed)
    text += ", +" + std::to_string(ranks.size() - kLastToFinishListed) + " more ranks";
  if (spread.tiedSteps > 0) text += (text.empty() ? "" : ", ") + std::string("tied ") + std::to_string(spread.tiedSteps);
  return text;
}

}  // namespace dtbench::report
