#include "experiments/predict/zoo_step.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include <ATen/Parallel.h>
#include <torch/nn/functional/loss.h>
#include <torch/torch.h>

#include "common/usage_error.h"
#include "experiments/predict/compute_device.h"
#include "experiments/predict/step_description.h"
#include "models/flop_count.h"
#include "models/registry.h"
#include "trainer/record/speed_of_light.h"
#include "trainer/step/gradient_ready.h"

namespace dtbench::predict {
namespace {

constexpr int kWarmups = 1, kTimed = 3;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void check(const ZooStepRequest& r) {
  using common::UsageError;
  if (!models::isModelName(r.model))
    throw UsageError("--describe-model: unknown model '" + r.model + "' (dtbench models lists the zoo)");
  if (r.imageSize < 8 || r.imageSize > 1024) throw UsageError("--image-size must be from 8 to 1024 pixels");
  if (r.classes < 2 || r.classes > 100000) throw UsageError("--classes must be from 2 to 100000");
  if (r.batchSize < 1) throw UsageError("--describe-model needs --batch-size (per rank), e.g. --batch-size 32");
  if (r.batchSize > kMostBatchSize)
    throw UsageError("--batch-size must be at most " + std::to_string(kMostBatchSize) + " images per rank");
  if (r.trainSamples < 1 || r.trainSamples > kMostSamples)
    throw UsageError("--train-samples must be from 1 to " + std::to_string(kMostSamples));
  if (!r.gpu.empty() && !deviceFromGpuField(r.gpu))
    throw UsageError("--gpu '" + r.gpu + "' is neither none (CPU) nor a GPU of the peak table: " + gpuFieldChoices());
  if (!(r.backwardS > 0)) throw UsageError("--describe-model needs --backward-ms > 0: the step's backward on the GPU described");
  for (const double s : {r.h2dS, r.forwardS, r.optimizerS})
    if (!(s >= 0) || !std::isfinite(s)) throw UsageError("--h2d-ms, --forward-ms and --optimizer-ms must be >= 0");
  // What a description holds (step_description.h): each phase, and their total, at most kMostPhaseSeconds.
  char most[32];
  std::snprintf(most, sizeof most, "%g ms", kMostPhaseSeconds * 1e3);
  for (const auto& [flag, s] : {std::pair{"--h2d-ms", r.h2dS}, std::pair{"--forward-ms", r.forwardS},
                                std::pair{"--backward-ms", r.backwardS}, std::pair{"--optimizer-ms", r.optimizerS}})
    if (s > kMostPhaseSeconds) throw UsageError(std::string(flag) + " must be at most " + most);
  if (r.h2dS + r.forwardS + r.backwardS + r.optimizerS > kMostPhaseSeconds)
    throw UsageError(std::string("--h2d-ms + --forward-ms + --backward-ms + --optimizer-ms must total at most ") + most);
}

}  // namespace

nlohmann::json describeZooStep(const ZooStepRequest& r) {
  check(r);
  const models::ModelOptions options = models::optionsForImageSize(r.model, r.channels, r.imageSize, r.classes);
  models::ClassifierPtr model;
  try {
    model = models::makeModel(r.model, options);
  } catch (const std::invalid_argument& e) {
    throw common::UsageError(std::string("--describe-model: ") + e.what());
  }
  at::set_num_threads(1);
  torch::manual_seed(0);
  model->module().train();
  trainer::GradientReadyProbe probe(model->module());
  const torch::Tensor input = torch::randn({2, r.channels, r.imageSize, r.imageSize});
  const torch::Tensor target = torch::randint(r.classes, {2}, torch::kLong);
  std::vector<std::vector<double>> fractions(probe.parameters().size());
  for (int pass = 0; pass < kWarmups + kTimed; ++pass) {
    model->module().zero_grad();
    torch::Tensor loss;
    try {
      loss = torch::nn::functional::cross_entropy(model->forward(input), target);
    } catch (const c10::Error& e) {
      throw common::UsageError("--describe-model: " + r.model + " does not take " + std::to_string(r.imageSize) + "x" +
                               std::to_string(r.imageSize) + " images (" + e.what_without_backtrace() +
                               "); its own size is 32 (a ResNet or VGG also takes 64 and more in its ImageNet layout)");
    }
    const auto start = std::chrono::steady_clock::now();
    probe.arm();
    loss.backward();
    probe.disarm();
    const double backward = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pass < kWarmups) continue;
    for (size_t i = 0; i < fractions.size(); ++i) {
      const double ready = probe.readyS()[i];
      fractions[i].push_back(std::isnan(ready) ? 1.0 : std::min(1.0, ready / backward));
    }
  }
  MeasuredStep step;
  step.described = true;
  step.settings.model = r.model;
  step.settings.comm.connection.backend = comm::Backend::kNccl;
  step.datasetLabel = r.dataset.empty() ? std::to_string(r.imageSize) + "x" + std::to_string(r.imageSize) : r.dataset;
  step.batchSize = r.batchSize;
  step.trainSamples = r.trainSamples;
  step.h2dS = r.h2dS;
  step.forwardS = r.forwardS;
  step.backwardS = r.backwardS;
  step.optimizerS = r.optimizerS;
  step.computeS = r.h2dS + r.forwardS + r.backwardS + r.optimizerS;
  if (!r.gpu.empty()) step.device = *deviceFromGpuField(r.gpu);
  try {
    step.flops = trainer::modelFlops(models::countFlops(*model, r.channels, r.imageSize, r.classes));
  } catch (const std::invalid_argument& e) {
    throw common::UsageError(std::string("--describe-model: counting ") + r.model + "'s FLOPs: " + e.what());
  }
  step.bufferElements = probe.bufferElements();
  step.bufferElementsKnown = true;
  for (size_t i = 0; i < fractions.size(); ++i) {
    const run::ProfiledParameter& p = probe.parameters()[i];
    MeasuredParameter parameter;
    parameter.name = p.name;
    parameter.elements = p.elements;
    parameter.dtype = p.dtype;
    parameter.shape = p.shape;
    parameter.elementBytes = 4;
    parameter.readyS = median(fractions[i]) * r.backwardS;
    step.parameters.push_back(parameter);
  }
  char layout[160];
  std::snprintf(layout, sizeof layout, "%s%s, %lldx%lld images, %lld classes", r.model.c_str(),
                options.imagenetLayout ? " (ImageNet layout)" : "", static_cast<long long>(r.imageSize),
                static_cast<long long>(r.imageSize), static_cast<long long>(r.classes));
  return describeStep(step, std::string(layout) + "; phases: " + (r.source.empty() ? "given by the user" : r.source) +
                                "; gradient ready fractions measured on the CPU (batch 2, median of 3 backward passes)");
}

}  // namespace dtbench::predict
