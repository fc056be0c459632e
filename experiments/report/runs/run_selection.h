#pragma once
// RunSelection: the runs a report reads, split into those usable for the tables (with their chosen
// epoch and configuration) and those left out with the reason; usable runs grouped by
// configuration, repeats together (docs/report.md, "Which runs"). A completed run resized by --resume
// is taken segment by segment (docs/report.md, "Resized runs"): each segment usable or left out on its
// own, its configuration marked with the segment (Configuration::segment), never a repeat or a baseline
// of another run.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_epoch.h"

namespace dtbench::report {

struct UsableRun {
  const RunData* run = nullptr;
  Configuration configuration;
  RunEpoch epoch;
};

struct LeftOutRun {
  const RunData* run = nullptr;
  std::string reason;
};

struct RunSelection {
  std::vector<UsableRun> usable;
  std::vector<LeftOutRun> leftOut;
  // Usable runs by configuration (repeats share an entry), in configuration order.
  std::map<Configuration, std::vector<const UsableRun*>> groups;
  // The segments of resized runs (runs/run_segments.h), each taken as a run: what usable and leftOut point
  // to for them.
  std::vector<std::shared_ptr<const RunData>> segments;
};

// `runs` must outlive the selection.
RunSelection selectRuns(const std::vector<RunData>& runs, std::optional<int> epoch);

// The median (mean of the middle two for an even count) of `value` over a group's repeats.
template <typename Value>
double medianOver(const std::vector<const UsableRun*>& repeats, Value value);

double median(std::vector<double> values);

template <typename Value>
double medianOver(const std::vector<const UsableRun*>& repeats, Value value) {
  std::vector<double> values;
  for (const UsableRun* r : repeats) values.push_back(value(*r));
  return median(values);
}

}  // namespace dtbench::report
