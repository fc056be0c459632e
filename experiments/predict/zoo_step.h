#pragma once
// describeZooStep: the step description (step_description.h) of a model of the zoo at a given image
// size, with compute times the user gives (docs/predict.md, "The step description"). Its parameters
// are the model's own (names, sizes, float32), in backward order; the moment each gradient becomes
// ready, as a fraction of backward, is measured here: the model runs forward and backward on this
// machine's CPU (batch 2, one thread, 3 timed backward passes after one warm-up, median per parameter)
// under trainer::GradientReadyProbe, the probe a training run's step_profile.json comes from. The
// fraction is the CPU's; a GPU spreads backward over the layers in about, not exactly, the same
// proportion (said in the description's text).

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::predict {

struct ZooStepRequest {
  std::string model;             // a name of the zoo (models/registry.h)
  int64_t imageSize = 32;        // square images; >= 64 with a ResNet or VGG: its ImageNet layout
  int64_t classes = 10;
  int64_t channels = 3;
  std::string dataset;           // free text, e.g. "imagenet 224x224"
  int batchSize = 0;             // per rank
  int64_t trainSamples = 50000;  // per epoch (CIFAR-10's training set)
  double h2dS = 0, forwardS = 0, backwardS = 0, optimizerS = 0;  // the step's phases, given
  std::string source;            // where the phases come from (into the description)
  std::string gpu;               // the device they are of: "none", a key of the peak table, or "" (unnamed)
};

// Throws common::UsageError naming what is wrong (unknown model, image too small for it, ...).
nlohmann::json describeZooStep(const ZooStepRequest& request);

}  // namespace dtbench::predict
