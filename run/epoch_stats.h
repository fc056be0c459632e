#pragma once
// EpochStats: one epoch of one rank, added up from its StepRecords, as summary.json reports it
// (docs/run-directory.md): the sums of every phase column of batches.csv under the column's name
// (run/step_record.h), and the epoch's figures.
//
// train_time_s = sum(step_s - data_s): the epoch time T of docs/report.md's Table 1 (data I/O excluded;
// copy, forward, backward, communication and update included). When --max-steps cut the epoch
// short, extrapolated_epoch_s = train_time_s / steps * full_epoch_steps and "extrapolated" is true.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/step_record.h"

namespace dtbench::run {

struct EpochStats : PhaseTimes {  // the phases: sums over the epoch's steps (step_s: the loop's wall time)
  int64_t epoch = 0;
  int64_t steps = 0;
  int64_t fullEpochSteps = 0;  // steps a whole epoch has
  int64_t samples = 0;
  double meanLoss = 0;
  double trainAccuracy = 0;
  double testAccuracy = std::numeric_limits<double>::quiet_NaN();
  double evalS = 0;

  double trainTimeS() const { return stepS - dataS; }
  double computeS() const { return stepS - dataS - commExposedS; }
  bool extrapolated() const { return steps < fullEpochSteps; }
  double extrapolatedEpochS() const { return steps ? trainTimeS() / steps * fullEpochSteps : 0.0; }
  double imagesPerSec() const { return stepS > 0 ? samples / stepS : 0.0; }
};

EpochStats addUp(int64_t epoch, int64_t fullEpochSteps, const std::vector<StepRecord>& steps);

nlohmann::json toJson(const EpochStats& stats);

// An epoch object of summary.json (or of a checkpoint) read back. Each key present is read by its
// own reader; a value of another type adds "<where>KEY takes ..., got ..." to `problems` and keeps
// the default. An absent key keeps its default too, unless `complete` (a checkpoint's own epochs,
// which hold every key): then it is a problem.
EpochStats readEpochStats(const nlohmann::json& object, const std::string& where, std::vector<std::string>& problems,
                          bool complete = false);

}  // namespace dtbench::run
