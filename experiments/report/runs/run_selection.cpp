#include "experiments/report/runs/run_selection.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>

#include "experiments/report/runs/compressed_steps.h"

namespace dtbench::report {

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

RunSelection selectRuns(const std::vector<RunData>& runs, std::optional<int> epoch) {
  RunSelection selection;
  selection.usable.reserve(runs.size());  // groups point into it
  for (const RunData& run : runs) {
    EpochSelection chosen = selectEpoch(run, epoch);
    if (!chosen.epoch) {
      selection.leftOut.push_back({&run, chosen.reason});
      continue;
    }
    Configuration configuration = configurationOf(run);
    // --compress as the chosen epoch's steps sent it (powersgd's first --compress-start steps go uncompressed).
    if (const auto it = configuration.settings.find("compress"); it != configuration.settings.end())
      it->second = compressionUsed(run, chosen.epoch->ranks[0].compressedSteps, chosen.epoch->steps);
    selection.usable.push_back({&run, std::move(configuration), std::move(*chosen.epoch)});
  }
  std::vector<Configuration*> configurations;
  for (UsableRun& usable : selection.usable) configurations.push_back(&usable.configuration);
  nameDifferingSettings(configurations);
  for (const UsableRun& usable : selection.usable) selection.groups[usable.configuration].push_back(&usable);
  return selection;
}

}  // namespace dtbench::report
