#pragma once
// The optimizer-state fixtures of tests/trainer/fixtures/: a small model trained a few steps by each
// optimizer dtbench makes, saved with serializeTrainingState (the model and optimizer part of a
// checkpoint's rank<r>.pt). The committed files were written by torch::optim's own SGD, Adam and
// RMSprop; test_optimizer.cpp resumes from them with today's optimizers.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/activation.h>

#include "trainer/config.h"

namespace dtbench::testing {

inline constexpr int64_t kFixtureSteps = 3;

// Two linear layers with a nonlinearity between them; every parameter gets a gradient.
inline torch::nn::Sequential fixtureModel() {
  return torch::nn::Sequential(torch::nn::Linear(6, 5), torch::nn::Tanh(), torch::nn::Linear(5, 3));
}

// The gradient of step `step` (1-based): the same for every optimizer, a loss over a fixed batch.
inline void fixtureGradients(torch::nn::Sequential& model, int64_t step, torch::Device device = torch::kCPU) {
  torch::manual_seed(100 + static_cast<uint64_t>(step));
  const torch::Tensor x = torch::randn({4, 6}).to(device);
  const torch::Tensor y = torch::randn({4, 3}).to(device);
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  (model->forward(x) - y).pow(2).mean().backward();
}

// The configuration each fixture was trained with (momentum for sgd and rmsprop, weight decay for all).
inline trainer::RunConfig fixtureConfig(trainer::OptimizerKind kind) {
  trainer::RunConfig config;
  config.optimizer.kind = kind;
  config.optimizer.lr = 0.05;
  config.optimizer.momentum = kind == trainer::OptimizerKind::kAdam ? -1.0 : 0.9;
  config.optimizer.weightDecay = 0.01;
  return trainer::resolveDefaults(config);
}

inline std::string fixtureFile(trainer::OptimizerKind kind) {
  const char* names[] = {"sgd", "adam", "rmsprop"};
  return std::string(DTBENCH_TRAINER_FIXTURES) + "/optimizer_state_" + names[static_cast<int>(kind)] + ".pt";
}

}  // namespace dtbench::testing
