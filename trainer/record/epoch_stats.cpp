#include "trainer/record/epoch_stats.h"

#include <cmath>

namespace dtbench::trainer {

EpochStats addUp(int64_t epoch, int64_t fullEpochSteps, const std::vector<StepRecord>& steps) {
  EpochStats s;
  s.epoch = epoch;
  s.fullEpochSteps = fullEpochSteps;
  s.steps = static_cast<int64_t>(steps.size());
  double lossSum = 0;
  double correct = 0;
  for (const StepRecord& r : steps) {
    s.samples += r.samples;
    s.stepS += r.stepS;
    s.dataS += r.dataS;
    s.h2dS += r.h2dS;
    s.forwardS += r.forwardS;
    s.backwardS += r.backwardS;
    s.commTotalS += r.commTotalS;
    s.commExposedS += r.commExposedS;
    s.optimizerS += r.optimizerS;
    lossSum += r.loss;
    correct += r.accuracy * static_cast<double>(r.samples);
  }
  if (s.steps) s.meanLoss = lossSum / static_cast<double>(s.steps);
  if (s.samples) s.trainAccuracy = correct / static_cast<double>(s.samples);
  return s;
}

nlohmann::json toJson(const EpochStats& s) {
  nlohmann::json j = {
      {"epoch", s.epoch},
      {"steps", s.steps},
      {"full_epoch_steps", s.fullEpochSteps},
      {"samples", s.samples},
      {"step_s", s.stepS},
      {"train_time_s", s.trainTimeS()},
      {"extrapolated", s.extrapolated()},
      {"extrapolated_epoch_s", s.extrapolatedEpochS()},
      {"data_s", s.dataS},
      {"h2d_s", s.h2dS},
      {"forward_s", s.forwardS},
      {"backward_s", s.backwardS},
      {"comm_total_s", s.commTotalS},
      {"comm_exposed_s", s.commExposedS},
      {"overlap_s", s.commTotalS - s.commExposedS},
      {"optimizer_s", s.optimizerS},
      {"compute_s", s.computeS()},
      {"images_per_s", s.imagesPerSec()},
      {"train_loss", s.meanLoss},
      {"train_accuracy", s.trainAccuracy},
      {"eval_s", s.evalS},
  };
  j["test_accuracy"] = std::isnan(s.testAccuracy) ? nlohmann::json(nullptr) : nlohmann::json(s.testAccuracy);
  return j;
}

double numberOrNaN(const nlohmann::json& value) {
  return value.is_null() ? std::nan("") : value.get<double>();
}

EpochStats epochStatsFromJson(const nlohmann::json& j) {
  EpochStats s;
  s.epoch = j.at("epoch");
  s.steps = j.at("steps");
  s.fullEpochSteps = j.at("full_epoch_steps");
  s.samples = j.at("samples");
  s.stepS = j.at("step_s");
  s.dataS = j.at("data_s");
  s.h2dS = numberOrNaN(j.at("h2d_s"));  // null: not timed (--phase-timing none)
  s.forwardS = numberOrNaN(j.at("forward_s"));  // null: not timed (--phase-timing none)
  s.backwardS = numberOrNaN(j.at("backward_s"));  // null: not timed (--phase-timing none)
  s.commTotalS = j.at("comm_total_s");
  s.commExposedS = j.at("comm_exposed_s");
  s.optimizerS = numberOrNaN(j.at("optimizer_s"));  // null: not timed (--phase-timing none)
  s.meanLoss = numberOrNaN(j.at("train_loss"));
  s.trainAccuracy = numberOrNaN(j.at("train_accuracy"));
  s.evalS = j.at("eval_s");
  if (!j.at("test_accuracy").is_null()) s.testAccuracy = j.at("test_accuracy");
  return s;
}

}  // namespace dtbench::trainer
