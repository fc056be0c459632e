#include "experiments/report/runs/compressed_steps.h"

#include <cstddef>
#include <vector>

#include "run/compression.h"

namespace dtbench::report {
namespace {

// The all-reduces of one compressed step (bucket_collectives), 0 when not recorded.
int64_t compressedCollectives(const RunData& run) {
  if (!run.facts.world || !run.facts.world->buckets) return 0;
  int64_t count = 0;
  for (const std::vector<run::CollectiveFacts>& bucket : run.facts.world->buckets->collectives)
    count += static_cast<int64_t>(bucket.size());
  return count;
}

}  // namespace

bool compressesAnyGradient(const RunData& run) {
  if (run.worldSize() < 2 || run.settings.sync.kind != run::Sync::kSsgd) return false;
  const run::CompressionRow& row = run::compressionRow(run.settings.sync.compress);
  if (!row.compresses) return false;
  // A low-rank compression compresses a gradient only where some bucket sends its factors.
  if (!row.takesRank) return true;
  if (!run.facts.world || !run.facts.world->buckets || run.facts.world->buckets->collectives.empty()) return true;
  for (const std::vector<run::CollectiveFacts>& bucket : run.facts.world->buckets->collectives)
    for (const run::CollectiveFacts& c : bucket)
      if (c.what == run::kFactorPart) return true;
  return false;
}

bool stepCompressed(const RunData& run, const run::StepRecord& row) {
  if (!compressesAnyGradient(run)) return false;
  // Only a compression with --compress-start sends some steps whole.
  if (!run::compressionRow(run.settings.sync.compress).takesStart) return true;
  if (row.gradCollectives > 0) return row.gradCollectives == compressedCollectives(run);
  // Before grad_collectives: the global step against --compress-start.
  const run::EpochStats* first = run.summary.findEpoch(1);
  const int64_t perEpoch = first != nullptr ? first->steps : 0;
  return (row.epoch - 1) * perEpoch + row.step > run.settings.sync.compressStart;
}

std::string compressionUsed(const RunData& run, int64_t compressedSteps, int64_t steps) {
  const std::string name = run::compressionNames().name(run.settings.sync.compress);
  if (!run::compressionRow(run.settings.sync.compress).compresses || compressedSteps == steps) return name;
  if (compressedSteps == 0) return "none (" + name + " compressed no step)";
  return name + " (" + std::to_string(compressedSteps) + " of " + std::to_string(steps) + " steps)";
}

}  // namespace dtbench::report
