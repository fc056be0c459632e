#include "models/lenet.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

#include "models/model_options.h"

namespace dtbench::models {

namespace F = torch::nn::functional;

LeNetImpl::LeNetImpl(ModelOptions options) : options_(options) {
  checkModelOptions(options_);
  reset();
}

void LeNetImpl::reset() {
  conv1_ = register_module("conv1", torch::nn::Conv2d(options_.inputChannels, 6, 5));
  conv2_ = register_module("conv2", torch::nn::Conv2d(6, 16, 5));
  fc1_ = register_module("fc1", torch::nn::Linear(16 * 5 * 5, 120));
  fc2_ = register_module("fc2", torch::nn::Linear(120, 84));
  fc3_ = register_module("fc3", torch::nn::Linear(84, options_.numClasses));
}

torch::Tensor LeNetImpl::forward(torch::Tensor x) {
  auto out = F::max_pool2d(F::relu(conv1_(x)), F::MaxPool2dFuncOptions(2));
  out = F::max_pool2d(F::relu(conv2_(out)), F::MaxPool2dFuncOptions(2));
  out = out.flatten(1);  // any memory format (--channels-last), unlike view()
  out = F::relu(fc1_(out));
  out = F::relu(fc2_(out));
  return fc3_(out);
}

}  // namespace dtbench::models
