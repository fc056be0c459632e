#pragma once
// makeOptimizer: the optimizer named in the configuration (sgd, adam, rmsprop) over `parameters`,
// with lr, momentum and weight decay from the configuration (resolveDefaults fills them): the
// multi-tensor optimizers of trainer/step/numerics/multi_tensor_optimizers.h, which save and load as LibTorch's own.

#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include "trainer/config.h"

namespace dtbench::trainer {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const RunConfig& config,
                                                       const std::vector<torch::Tensor>& parameters);

}  // namespace dtbench::trainer
