#include "experiments/report/runs/run_epoch.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

namespace dtbench::report {
namespace {

const nlohmann::json* summaryEpoch(const RunData& run, int epoch) {
  if (!run.summary.is_object() || !run.summary.contains("epochs") || !run.summary["epochs"].is_array()) return nullptr;
  for (const nlohmann::json& e : run.summary["epochs"])
    if (e.is_object() && e.contains("epoch") && e["epoch"].is_number_integer() && e["epoch"].get<int>() == epoch)
      return &e;
  return nullptr;
}

std::string statusReason(const RunData& run) {
  const std::string status = run.status();
  std::string reason = "status " + status;
  if (status == "failed" && run.summary.contains("error") && run.summary["error"].is_string())
    reason += ": " + run.summary["error"].get<std::string>();
  if (status == "interrupted" && run.summary.contains("interrupted_at_step"))
    reason += " at step " + run.summary["interrupted_at_step"].dump();
  return reason;
}

// The epoch object's non-negative whole number `key`, -1 when it is absent or anything else.
int64_t integerOf(const nlohmann::json& epoch, const char* key) {
  if (!epoch.contains(key) || !epoch[key].is_number_integer()) return -1;
  const nlohmann::json& value = epoch[key];
  if (value.is_number_unsigned())
    return value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? value.get<int64_t>()
                                                                                               : -1;
  return std::max<int64_t>(value.get<int64_t>(), -1);
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

int finishedEpochs(const RunData& run) {
  if (!run.summary.is_object() || !run.summary.contains("epochs") || !run.summary["epochs"].is_array()) return 0;
  return static_cast<int>(run.summary["epochs"].size());
}

EpochSelection selectEpoch(const RunData& run, std::optional<int> wanted) {
  EpochSelection selection;
  if (!run.problems.empty()) {
    selection.reason = run.problems.front();
    return selection;
  }
  if (run.status() != "completed") {
    selection.reason = statusReason(run);
    return selection;
  }
  const int finished = finishedEpochs(run);
  const int epoch = wanted.value_or(finished);
  const nlohmann::json* summary = summaryEpoch(run, epoch);
  if (summary == nullptr) {
    selection.reason = "no epoch " + std::to_string(epoch) + " (the run has " + std::to_string(finished) + ")";
    return selection;
  }
  const int world = run.worldSize();
  RunEpoch e;
  e.epoch = epoch;
  e.ranks.assign(world, RankSums{});
  std::map<int64_t, double> slowest;
  for (const BatchRow& row : run.batches) {
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
    r.stepS += row.stepS;
    r.dataS += row.dataS;
    r.commTotalS += row.commTotalS;
    r.commExposedS += row.commExposedS;
    r.bytesSent += row.bytesSent;
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
  const int64_t summarySteps = integerOf(*summary, "steps");
  if (summarySteps != e.steps) {
    selection.reason = "batches.csv has " + std::to_string(e.steps) + " epoch " + std::to_string(epoch) +
                       " rows per rank, summary.json says the epoch had " +
                       (summarySteps < 0 ? std::string("no valid 'steps'") : std::to_string(summarySteps) + " steps");
    return selection;
  }
  e.fullSteps = summary->contains("full_epoch_steps") ? integerOf(*summary, "full_epoch_steps") : e.steps;
  if (e.fullSteps < e.steps) {
    selection.reason = "summary.json epoch " + std::to_string(epoch) + ": full_epoch_steps " +
                       (*summary)["full_epoch_steps"].dump() + " is not a step count of at least its " +
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
