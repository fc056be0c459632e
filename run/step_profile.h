#pragma once
// StepProfile: the content of step_profile.json (docs/run-directory.md): for each trainable
// parameter, when in backward its gradient became ready, as the median over the run's steps, and
// the median backward time over the same steps. The offsets come from the GradientReadyProbe
// (trainer/step/gradient_ready.h), backward_s from the step's StepRecord (batches.csv's column); rank 0's
// RunRecorder keeps the profile and writes it where the run ends.
//
// Contract:
//   - the first step added is the warm-up (allocations, first-touch of every buffer) and counts
//     only when it stays the only one;
//   - ready_s of a parameter = the median of its finite offsets over the counted steps (a NaN
//     offset: its gradient was not produced in that step), null when it has none; backward_s = the
//     median of backward_s over the same steps. The median of an even number of values is the mean
//     of the middle two;
//   - memory is bounded: up to kMaxKeptSteps steps are kept; beyond that every second kept step is
//     dropped and from then on only every 2^k-th step is kept, so the medians are over an evenly
//     spaced sample of the counted steps (every step up to kMaxKeptSteps of them); `steps` counts
//     them all.
// readStepProfile reads the file back (predict, docs/predict.md). Plain data, no LibTorch.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::run {

// One trainable parameter as step_profile.json describes it.
struct ProfiledParameter {
  std::string name;  // model.named_parameters()'s key, e.g. "conv1.weight"
  int64_t elements = 0;
  std::string dtype;  // as comm/element_type.h names it: float32, ...
  // Its sizes (what PowerSGD's matrix view needs, trainer/sync/powersgd.h); empty in profiles written
  // before they were recorded.
  std::vector<int64_t> shape;
};

class StepProfile {
 public:
  static constexpr size_t kMaxKeptSteps = 4096;

  // `parameters` in model.parameters() order (trainable ones only); `bufferElements`: elements of
  // the model's floating-point buffers (BatchNorm's running statistics), what --sync ssgd broadcasts
  // from rank 0 every step unless --local-bn-stats.
  explicit StepProfile(std::vector<ProfiledParameter> parameters, int64_t bufferElements = 0);

  // One step: its backward_s and, per parameter, the seconds from the start of backward to its
  // gradient being ready (NaN: not ready in this step). Throws std::invalid_argument when
  // `readyS` does not have one entry per parameter.
  void add(double backwardS, const std::vector<double>& readyS);

  // Steps the medians describe: those added less the warm-up (the warm-up alone when it is the only
  // one); 0 before any step.
  int64_t steps() const;

  // {"rank", "steps", "backward_s", "buffer_elements", "parameters": [{"name", "elements", "dtype",
  // "shape" (where known), "ready_s"}, ...]}.
  nlohmann::json toJson(int rank) const;

 private:
  struct Sample {
    double backwardS = 0;
    std::vector<double> readyS;
  };
  std::vector<ProfiledParameter> parameters_;
  int64_t bufferElements_ = 0;
  std::optional<Sample> warmUp_;
  std::vector<Sample> kept_;  // counted steps 0, stride, 2 stride, ...
  int64_t counted_ = 0;       // steps added after the warm-up
  int64_t stride_ = 1;
};

// step_profile.json read back.
struct ProfiledStep {
  int64_t steps = 0;
  double backwardS = 0;                       // NaN: null, no step measured
  std::optional<int64_t> bufferElements;      // absent from profiles written before it was recorded
  std::vector<ProfiledParameter> parameters;  // model.parameters() order
  std::vector<std::optional<double>> readyS;  // per parameter; nullopt: its gradient never arrived
};

// Throws std::invalid_argument naming the key and what it takes when `json` is not such a profile.
ProfiledStep readStepProfile(const nlohmann::json& json);

}  // namespace dtbench::run
