#include "models/mobilenetv2.h"

#include <array>

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

#include "models/conv_options.h"
#include "models/model_options.h"

namespace dtbench::models {

namespace F = torch::nn::functional;

namespace {

struct StageConfig {
  int64_t expansion;
  int64_t outPlanes;
  int64_t numBlocks;
  int64_t stride;
};

constexpr std::array<StageConfig, 7> kStages{{
    {1, 16, 1, 1},
    {6, 24, 2, 1},
    {6, 32, 3, 2},
    {6, 64, 4, 2},
    {6, 96, 3, 1},
    {6, 160, 3, 2},
    {6, 320, 1, 1},
}};

constexpr int64_t kStemPlanes = 32;
constexpr int64_t kHeadPlanes = 1280;

}  // namespace

InvertedResidualImpl::InvertedResidualImpl(int64_t inPlanes, int64_t outPlanes,
                                           int64_t expansion, int64_t stride)
    : inPlanes_(inPlanes), outPlanes_(outPlanes), expansion_(expansion), stride_(stride) {
  reset();
}

void InvertedResidualImpl::reset() {
  const int64_t planes = expansion_ * inPlanes_;
  conv1_ = register_module("conv1", torch::nn::Conv2d(convNoBias(inPlanes_, planes, 1)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
  conv2_ = register_module(
      "conv2", torch::nn::Conv2d(convNoBias(planes, planes, 3, stride_, 1).groups(planes)));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
  conv3_ = register_module("conv3", torch::nn::Conv2d(convNoBias(planes, outPlanes_, 1)));
  bn3_ = register_module("bn3", torch::nn::BatchNorm2d(outPlanes_));
  torch::nn::Sequential shortcut;
  if (stride_ == 1 && inPlanes_ != outPlanes_) {
    shortcut->push_back(torch::nn::Conv2d(convNoBias(inPlanes_, outPlanes_, 1)));
    shortcut->push_back(torch::nn::BatchNorm2d(outPlanes_));
  }
  shortcut_ = register_module("shortcut", shortcut);
}

torch::Tensor InvertedResidualImpl::forward(torch::Tensor x) {
  auto out = F::relu(bn1_(conv1_(x)));
  out = F::relu(bn2_(conv2_(out)));
  out = bn3_(conv3_(out));
  if (stride_ != 1) {
    return out;
  }
  return out + (shortcut_->is_empty() ? x : shortcut_->forward(x));
}

MobileNetV2Impl::MobileNetV2Impl(ModelOptions options) : options_(options) {
  checkModelOptions(options_);
  reset();
}

void MobileNetV2Impl::reset() {
  conv1_ = register_module(
      "conv1", torch::nn::Conv2d(convNoBias(options_.inputChannels, kStemPlanes, 3, 1, 1)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(kStemPlanes));
  torch::nn::Sequential layers;
  int64_t inPlanes = kStemPlanes;
  for (const auto& stage : kStages) {
    for (int64_t i = 0; i < stage.numBlocks; ++i) {
      layers->push_back(
          InvertedResidual(inPlanes, stage.outPlanes, stage.expansion, i == 0 ? stage.stride : 1));
      inPlanes = stage.outPlanes;
    }
  }
  layers_ = register_module("layers", layers);
  conv2_ = register_module("conv2", torch::nn::Conv2d(convNoBias(inPlanes, kHeadPlanes, 1)));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(kHeadPlanes));
  linear_ = register_module("linear", torch::nn::Linear(kHeadPlanes, options_.numClasses));
}

torch::Tensor MobileNetV2Impl::forward(torch::Tensor x) {
  auto out = F::relu(bn1_(conv1_(x)));
  out = layers_->forward(out);
  out = F::relu(bn2_(conv2_(out)));
  out = F::avg_pool2d(out, F::AvgPool2dFuncOptions(4));
  out = out.view({out.size(0), -1});
  return linear_(out);
}

}  // namespace dtbench::models
