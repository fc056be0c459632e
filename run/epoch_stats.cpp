#include "run/epoch_stats.h"

#include <cmath>

#include "run/json_values.h"

namespace dtbench::run {
namespace {

nlohmann::json numberOrNull(double value) { return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value); }

}  // namespace

EpochStats addUp(int64_t epoch, int64_t fullEpochSteps, const std::vector<StepRecord>& steps) {
  EpochStats s;
  s.epoch = epoch;
  s.fullEpochSteps = fullEpochSteps;
  s.steps = static_cast<int64_t>(steps.size());
  double lossSum = 0;
  double correct = 0;
  for (const StepRecord& r : steps) {
    s.samples += r.samples;
    for (const BatchColumn* c : phaseColumns()) s.*c->phase += r.*c->phase;
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
      {"train_time_s", s.trainTimeS()},
      {"extrapolated", s.extrapolated()},
      {"extrapolated_epoch_s", s.extrapolatedEpochS()},
      {"overlap_s", s.commTotalS - s.commExposedS},
      {"compute_s", s.computeS()},
      {"images_per_s", s.imagesPerSec()},
      {"train_loss", s.meanLoss},
      {"train_accuracy", s.trainAccuracy},
      {"eval_s", s.evalS},
  };
  // A phase that was not timed (--phase-timing none) sums to NaN: null.
  for (const BatchColumn* c : phaseColumns()) j[c->name] = numberOrNull(s.*c->phase);
  j["test_accuracy"] = numberOrNull(s.testAccuracy);
  return j;
}

EpochStats readEpochStats(const nlohmann::json& object, const std::string& where, std::vector<std::string>& problems,
                          bool complete) {
  EpochStats s;
  const JsonFields fields(object, where, problems);
  const auto whole = [&](const char* key, int64_t& into) {
    fields.read(key, [&](const nlohmann::json& v) { into = wholeValue(v); }, complete);
  };
  const auto number = [&](const char* key, double& into) {
    fields.read(key, [&](const nlohmann::json& v) { into = numberValue(v); }, complete);
  };
  whole("epoch", s.epoch);
  whole("steps", s.steps);
  whole("full_epoch_steps", s.fullEpochSteps);
  whole("samples", s.samples);
  // A phase added after the summary was written is absent from it: 0, as in batches.csv.
  for (const BatchColumn* c : phaseColumns())
    if (!(c->addedLater && !object.contains(c->name))) number(c->name, s.*c->phase);
  number("train_loss", s.meanLoss);
  number("train_accuracy", s.trainAccuracy);
  number("eval_s", s.evalS);
  number("test_accuracy", s.testAccuracy);
  return s;
}

}  // namespace dtbench::run
