#include "trainer/step/numerics/optimizer.h"

#include <stdexcept>

#include "trainer/step/numerics/multi_tensor_optimizers.h"

namespace dtbench::trainer {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const RunConfig& config,
                                                       const std::vector<torch::Tensor>& parameters) {
  const OptimizerConfig& o = config.optimizer;
  switch (o.kind) {
    case OptimizerKind::kSgd:
      return std::make_unique<MultiTensorSGD>(
          parameters, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weightDecay));
    case OptimizerKind::kAdam:
      return std::make_unique<MultiTensorAdam>(parameters,
                                                  torch::optim::AdamOptions(o.lr).weight_decay(o.weightDecay));
    case OptimizerKind::kRmsprop:
      return std::make_unique<MultiTensorRMSprop>(
          parameters, torch::optim::RMSpropOptions(o.lr).momentum(o.momentum).weight_decay(o.weightDecay));
  }
  throw std::logic_error("unreachable OptimizerKind");
}

}  // namespace dtbench::trainer
