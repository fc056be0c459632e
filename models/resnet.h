#pragma once
// ResNet-18/34/50/101/152 for 32x32 images, as kuangliu/pytorch-cifar defines them (resnet.py):
//   conv3x3(C -> 64) - bn - relu
//   layer1..layer4: residual blocks of 64, 128, 256, 512 planes, first strides 1, 2, 2, 2
//   avg_pool2d(4) - linear(512 * expansion -> classes)
// 18 and 34 use BasicBlock (expansion 1), 50, 101 and 152 use Bottleneck (expansion 4).
// With ModelOptions::imagenetLayout, torchvision's layout for ImageNet-sized images instead: a
// conv7x7 stride 2 first, then max_pool 3x3 stride 2, and a global average pool before linear.
//
// Contract: parameters and buffers are registered in PyTorch's order under the Python attribute
// names (conv1, bn1, layer1.0.conv1, layer2.0.shortcut.0, ..., linear), so named_parameters()
// equals the Python model's state_dict keys. Everything is built in reset(), so clone() is an
// exact, independent deep copy.

#include <array>
#include <cstdint>

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "models/classifier_module.h"

namespace dtbench::models {

// conv3x3(stride) - bn - relu - conv3x3 - bn, plus the shortcut, then relu. The shortcut is
// conv1x1(stride) - bn when the stride or the width changes and the identity otherwise (an empty
// `shortcut` Sequential, as in Python).
class BasicBlockImpl : public torch::nn::Cloneable<BasicBlockImpl> {
 public:
  static constexpr int64_t kExpansion = 1;

  BasicBlockImpl(int64_t inPlanes, int64_t planes, int64_t stride);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t inPlanes_;
  int64_t planes_;
  int64_t stride_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Sequential shortcut_{nullptr};
};
TORCH_MODULE(BasicBlock);

// conv1x1 - bn - relu - conv3x3(stride) - bn - relu - conv1x1(4x) - bn, plus the shortcut (as in
// BasicBlock), then relu.
class BottleneckImpl : public torch::nn::Cloneable<BottleneckImpl> {
 public:
  static constexpr int64_t kExpansion = 4;

  BottleneckImpl(int64_t inPlanes, int64_t planes, int64_t stride);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t inPlanes_;
  int64_t planes_;
  int64_t stride_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Conv2d conv3_{nullptr};
  torch::nn::BatchNorm2d bn3_{nullptr};
  torch::nn::Sequential shortcut_{nullptr};
};
TORCH_MODULE(Bottleneck);

enum class ResNetBlock { kBasic, kBottleneck };

struct ResNetConfig {
  ResNetBlock block = ResNetBlock::kBasic;
  std::array<int64_t, 4> numBlocks{2, 2, 2, 2};
};

// The configuration of ResNet-`depth` for depth 18, 34, 50, 101 or 152; throws
// std::invalid_argument for any other depth.
ResNetConfig resNetConfig(int depth);

class ResNetImpl : public ClassifierModule<ResNetImpl> {
 public:
  ResNetImpl(ResNetConfig config, ModelOptions options);
  void reset() override;
  torch::Tensor forward(torch::Tensor x) override;

 private:
  // Appends the blocks of one stage (strides stride, 1, 1, ...); advances inPlanes.
  torch::nn::Sequential makeLayer(int64_t planes, int64_t numBlocks, int64_t stride,
                                  int64_t& inPlanes) const;

  ResNetConfig config_;
  ModelOptions options_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Sequential layer1_{nullptr};
  torch::nn::Sequential layer2_{nullptr};
  torch::nn::Sequential layer3_{nullptr};
  torch::nn::Sequential layer4_{nullptr};
  torch::nn::Linear linear_{nullptr};
};

}  // namespace dtbench::models
