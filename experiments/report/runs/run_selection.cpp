#include "experiments/report/runs/run_selection.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "experiments/report/runs/compressed_steps.h"
#include "experiments/report/runs/run_segments.h"
#include "run/run_outcome.h"

namespace dtbench::report {

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

RunSelection selectRuns(const std::vector<RunData>& runs, std::optional<int> epoch) {
  RunSelection selection;
  // A completed resized run: one run per segment.
  std::vector<const RunData*> taken;
  for (const RunData& run : runs) {
    if (run.facts.segments.size() < 2 || !run.problems.empty() || !run::isComplete(run.summary.status)) {
      taken.push_back(&run);
      continue;
    }
    for (RunData& segment : segmentRuns(run)) {
      selection.segments.push_back(std::make_shared<const RunData>(std::move(segment)));
      taken.push_back(selection.segments.back().get());
    }
  }
  selection.usable.reserve(taken.size());  // groups point into it
  for (const RunData* taking : taken) {
    const RunData& run = *taking;
    std::optional<int> wanted = epoch;
    if (run.segmentOf && !wanted && !run.summary.epochs.empty()) wanted = static_cast<int>(run.summary.epochs.back().epoch);
    if (run.segmentOf && wanted && !run.summary.findEpoch(*wanted)) {
      selection.leftOut.push_back({&run, run.segmentLabel + " (" + run.segmentOf->resized + ") trained no step of epoch " +
                                             std::to_string(*wanted)});
      continue;
    }
    EpochSelection chosen = selectEpoch(run, wanted);
    if (!chosen.epoch) {
      selection.leftOut.push_back({&run, (run.segmentOf ? run.segmentLabel + ": " : std::string()) + chosen.reason});
      continue;
    }
    Configuration configuration = configurationOf(run);
    if (run.segmentOf) {
      // The device as the whole run recorded it (config.json's devices are the first world's), and the segment
      // named where the tables show the setup.
      configuration.device = configurationOf(*run.segmentOf).device;
      configuration.segment = run.segmentLabel;
      configuration.setup = (configuration.setup.empty() ? "single rank" : configuration.setup) + ", " + run.segmentLabel;
    }
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
