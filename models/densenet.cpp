#include "models/densenet.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

#include "models/conv_options.h"
#include "models/model_options.h"

namespace dtbench::models {

namespace F = torch::nn::functional;

DenseLayerImpl::DenseLayerImpl(int64_t inPlanes, int64_t growthRate)
    : inPlanes_(inPlanes), growthRate_(growthRate) {
  reset();
}

void DenseLayerImpl::reset() {
  const int64_t innerPlanes = 4 * growthRate_;
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(inPlanes_));
  conv1_ = register_module("conv1", torch::nn::Conv2d(convNoBias(inPlanes_, innerPlanes, 1)));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(innerPlanes));
  conv2_ =
      register_module("conv2", torch::nn::Conv2d(convNoBias(innerPlanes, growthRate_, 3, 1, 1)));
}

torch::Tensor DenseLayerImpl::forward(torch::Tensor x) {
  auto out = conv1_(F::relu(bn1_(x)));
  out = conv2_(F::relu(bn2_(out)));
  return torch::cat({out, x}, 1);
}

TransitionImpl::TransitionImpl(int64_t inPlanes, int64_t outPlanes)
    : inPlanes_(inPlanes), outPlanes_(outPlanes) {
  reset();
}

void TransitionImpl::reset() {
  bn_ = register_module("bn", torch::nn::BatchNorm2d(inPlanes_));
  conv_ = register_module("conv", torch::nn::Conv2d(convNoBias(inPlanes_, outPlanes_, 1)));
}

torch::Tensor TransitionImpl::forward(torch::Tensor x) {
  auto out = conv_(F::relu(bn_(x)));
  return F::avg_pool2d(out, F::AvgPool2dFuncOptions(2));
}

DenseNetConfig denseNetConfig(int depth) {
  switch (depth) {
    case 121: return {{6, 12, 24, 16}, 32, 0.5};
    case 201: return {{6, 12, 48, 32}, 32, 0.5};
    default:
      throw std::invalid_argument("no DenseNet of depth " + std::to_string(depth) +
                                  "; depths are 121, 201");
  }
}

DenseNetImpl::DenseNetImpl(DenseNetConfig config, ModelOptions options)
    : config_(config), options_(options) {
  checkModelOptions(options_);
  reset();
}

void DenseNetImpl::reset() {
  int64_t planes = 2 * config_.growthRate;
  conv1_ = register_module(
      "conv1", torch::nn::Conv2d(convNoBias(options_.inputChannels, planes, 3, 1, 1)));
  for (size_t stage = 0; stage < dense_.size(); ++stage) {
    const std::string suffix = std::to_string(stage + 1);
    dense_[stage] =
        register_module("dense" + suffix, makeDense(planes, config_.numLayers[stage]));
    planes += config_.numLayers[stage] * config_.growthRate;
    if (stage < trans_.size()) {
      const auto outPlanes =
          static_cast<int64_t>(std::floor(static_cast<double>(planes) * config_.reduction));
      trans_[stage] = register_module("trans" + suffix, Transition(planes, outPlanes));
      planes = outPlanes;
    }
  }
  bn_ = register_module("bn", torch::nn::BatchNorm2d(planes));
  linear_ = register_module("linear", torch::nn::Linear(planes, options_.numClasses));
}

torch::nn::Sequential DenseNetImpl::makeDense(int64_t inPlanes, int64_t numLayers) const {
  torch::nn::Sequential dense;
  for (int64_t i = 0; i < numLayers; ++i) {
    dense->push_back(DenseLayer(inPlanes, config_.growthRate));
    inPlanes += config_.growthRate;
  }
  return dense;
}

torch::Tensor DenseNetImpl::forward(torch::Tensor x) {
  auto out = conv1_(x);
  for (size_t stage = 0; stage < dense_.size(); ++stage) {
    out = dense_[stage]->forward(out);
    if (stage < trans_.size()) {
      out = trans_[stage](out);
    }
  }
  out = F::avg_pool2d(F::relu(bn_(out)), F::AvgPool2dFuncOptions(4));
  out = out.view({out.size(0), -1});
  return linear_(out);
}

}  // namespace dtbench::models
