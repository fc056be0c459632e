#include "trainer/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

namespace dtbench::trainer {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const RunConfig& config,
                                                       const std::vector<torch::Tensor>& parameters) {
  if (config.optimizer == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        parameters, torch::optim::SGDOptions(config.lr).momentum(config.momentum).weight_decay(config.weightDecay));
  }
  if (config.optimizer == "adam") {
    return std::make_unique<torch::optim::Adam>(parameters,
                                                torch::optim::AdamOptions(config.lr).weight_decay(config.weightDecay));
  }
  if (config.optimizer == "rmsprop") {
    return std::make_unique<torch::optim::RMSprop>(
        parameters,
        torch::optim::RMSpropOptions(config.lr).momentum(config.momentum).weight_decay(config.weightDecay));
  }
  throwUnknownName("optimizer", "--optimizer", config.optimizer, optimizerNames());
}

}  // namespace dtbench::trainer
