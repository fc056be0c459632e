#pragma once
// EpochStats: one epoch of one rank, added up from its StepRecords, as summary.json reports it.
//
// train_time_s = sum(step_s - data_s): the epoch time T of docs/report.md's Table 1 (data I/O excluded;
// copy, forward, backward, communication and update included). When --max-steps cut the epoch
// short, extrapolated_epoch_s = train_time_s / steps * full_epoch_steps and "extrapolated" is true.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/record/step_record.h"

namespace dtbench::trainer {

struct EpochStats {
  int64_t epoch = 0;
  int64_t steps = 0;
  int64_t fullEpochSteps = 0;  // steps a whole epoch has
  int64_t samples = 0;
  double stepS = 0;  // sum of step_s: the training loop's wall time
  double dataS = 0;
  double h2dS = 0;
  double forwardS = 0;
  double backwardS = 0;
  double commTotalS = 0;
  double commExposedS = 0;
  double optimizerS = 0;
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
// Inverse of toJson (checkpoints keep the finished epochs' figures).
EpochStats epochStatsFromJson(const nlohmann::json& json);

// A number written by nlohmann::json, where NaN (a diverged loss) was written as null: NaN again.
double numberOrNaN(const nlohmann::json& value);

}  // namespace dtbench::trainer
