#include "models/resnet.h"

#include <stdexcept>
#include <string>

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

#include "models/conv_options.h"
#include "models/model_options.h"

namespace dtbench::models {

namespace F = torch::nn::functional;

namespace {

// Python's `self.shortcut`: conv1x1(stride) - bn when the block changes stride or width, otherwise
// an empty Sequential standing for the identity.
torch::nn::Sequential makeShortcut(int64_t inPlanes, int64_t outPlanes, int64_t stride) {
  torch::nn::Sequential shortcut;
  if (stride != 1 || inPlanes != outPlanes) {
    shortcut->push_back(torch::nn::Conv2d(convNoBias(inPlanes, outPlanes, 1, stride)));
    shortcut->push_back(torch::nn::BatchNorm2d(outPlanes));
  }
  return shortcut;
}

torch::Tensor applyShortcut(torch::nn::Sequential& shortcut, const torch::Tensor& x) {
  return shortcut->is_empty() ? x : shortcut->forward(x);
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t inPlanes, int64_t planes, int64_t stride)
    : inPlanes_(inPlanes), planes_(planes), stride_(stride) {
  reset();
}

void BasicBlockImpl::reset() {
  conv1_ = register_module("conv1",
                           torch::nn::Conv2d(convNoBias(inPlanes_, planes_, 3, stride_, 1)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes_));
  conv2_ = register_module("conv2", torch::nn::Conv2d(convNoBias(planes_, planes_, 3, 1, 1)));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes_));
  shortcut_ =
      register_module("shortcut", makeShortcut(inPlanes_, kExpansion * planes_, stride_));
}

torch::Tensor BasicBlockImpl::forward(torch::Tensor x) {
  auto out = F::relu(bn1_(conv1_(x)));
  out = bn2_(conv2_(out));
  out += applyShortcut(shortcut_, x);
  return F::relu(out);
}

BottleneckImpl::BottleneckImpl(int64_t inPlanes, int64_t planes, int64_t stride)
    : inPlanes_(inPlanes), planes_(planes), stride_(stride) {
  reset();
}

void BottleneckImpl::reset() {
  const int64_t outPlanes = kExpansion * planes_;
  conv1_ = register_module("conv1", torch::nn::Conv2d(convNoBias(inPlanes_, planes_, 1)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes_));
  conv2_ = register_module("conv2",
                           torch::nn::Conv2d(convNoBias(planes_, planes_, 3, stride_, 1)));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes_));
  conv3_ = register_module("conv3", torch::nn::Conv2d(convNoBias(planes_, outPlanes, 1)));
  bn3_ = register_module("bn3", torch::nn::BatchNorm2d(outPlanes));
  shortcut_ = register_module("shortcut", makeShortcut(inPlanes_, outPlanes, stride_));
}

torch::Tensor BottleneckImpl::forward(torch::Tensor x) {
  auto out = F::relu(bn1_(conv1_(x)));
  out = F::relu(bn2_(conv2_(out)));
  out = bn3_(conv3_(out));
  out += applyShortcut(shortcut_, x);
  return F::relu(out);
}

ResNetConfig resNetConfig(int depth) {
  switch (depth) {
    case 18: return {ResNetBlock::kBasic, {2, 2, 2, 2}};
    case 34: return {ResNetBlock::kBasic, {3, 4, 6, 3}};
    case 50: return {ResNetBlock::kBottleneck, {3, 4, 6, 3}};
    case 101: return {ResNetBlock::kBottleneck, {3, 4, 23, 3}};
    case 152: return {ResNetBlock::kBottleneck, {3, 8, 36, 3}};
    default:
      throw std::invalid_argument("no ResNet of depth " + std::to_string(depth) +
                                  "; depths are 18, 34, 50, 101, 152");
  }
}

ResNetImpl::ResNetImpl(ResNetConfig config, ModelOptions options)
    : config_(config), options_(options) {
  checkModelOptions(options_);
  reset();
}

void ResNetImpl::reset() {
  const int64_t expansion = config_.block == ResNetBlock::kBasic ? BasicBlockImpl::kExpansion
                                                                  : BottleneckImpl::kExpansion;
  int64_t inPlanes = 64;
  conv1_ = register_module("conv1", torch::nn::Conv2d(options_.imagenetLayout
                                                          ? convNoBias(options_.inputChannels, 64, 7, 2, 3)
                                                          : convNoBias(options_.inputChannels, 64, 3, 1, 1)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(64));
  layer1_ = register_module("layer1", makeLayer(64, config_.numBlocks[0], 1, inPlanes));
  layer2_ = register_module("layer2", makeLayer(128, config_.numBlocks[1], 2, inPlanes));
  layer3_ = register_module("layer3", makeLayer(256, config_.numBlocks[2], 2, inPlanes));
  layer4_ = register_module("layer4", makeLayer(512, config_.numBlocks[3], 2, inPlanes));
  linear_ = register_module("linear", torch::nn::Linear(512 * expansion, options_.numClasses));
}

torch::nn::Sequential ResNetImpl::makeLayer(int64_t planes, int64_t numBlocks, int64_t stride,
                                            int64_t& inPlanes) const {
  torch::nn::Sequential layer;
  for (int64_t i = 0; i < numBlocks; ++i) {
    const int64_t blockStride = i == 0 ? stride : 1;
    if (config_.block == ResNetBlock::kBasic) {
      layer->push_back(BasicBlock(inPlanes, planes, blockStride));
      inPlanes = planes * BasicBlockImpl::kExpansion;
    } else {
      layer->push_back(Bottleneck(inPlanes, planes, blockStride));
      inPlanes = planes * BottleneckImpl::kExpansion;
    }
  }
  return layer;
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  auto out = F::relu(bn1_(conv1_(x)));
  if (options_.imagenetLayout) out = F::max_pool2d(out, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
  out = layer1_->forward(out);
  out = layer2_->forward(out);
  out = layer3_->forward(out);
  out = layer4_->forward(out);
  out = options_.imagenetLayout ? F::adaptive_avg_pool2d(out, F::AdaptiveAvgPool2dFuncOptions(1))
                                : F::avg_pool2d(out, F::AvgPool2dFuncOptions(4));
  out = out.view({out.size(0), -1});
  return linear_(out);
}

}  // namespace dtbench::models
