#pragma once
// MobileNetV2 for 32x32 images, as kuangliu/pytorch-cifar defines it (mobilenetv2.py):
//   conv3x3(C -> 32, stride 1) - bn - relu
//   layers: 17 inverted residual blocks, (expansion, out planes, blocks, first stride) =
//           (1,16,1,1) (6,24,2,1) (6,32,3,2) (6,64,4,2) (6,96,3,1) (6,160,3,2) (6,320,1,1)
//           (the second stage's stride is 1 instead of ImageNet's 2)
//   conv1x1(320 -> 1280) - bn - relu - avg_pool2d(4) - linear(1280 -> classes)
// The last blocks work at 4x4, so avg_pool2d(4) leaves 1280 features (an early revision of the
// reference pooled with kernel 2, which cannot feed Linear(1280); the current one uses 4).
//
// Contract: parameters and buffers are registered in PyTorch's order under the Python attribute
// names (conv1, bn1, layers.0.conv1, layers.1.shortcut.0, ..., conv2, bn2, linear). Everything is
// built in reset(), so clone() is an exact, independent deep copy.

#include <cstdint>

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "models/classifier_module.h"

namespace dtbench::models {

// kuangliu's `Block` (expand + depthwise + pointwise): conv1x1(in -> e*in) - bn - relu,
// depthwise conv3x3(stride) - bn - relu, conv1x1(-> out) - bn. With stride 1 the shortcut is
// added: conv1x1 - bn when in != out, else the identity (an empty `shortcut` Sequential). With
// stride 2 there is no residual.
class InvertedResidualImpl : public torch::nn::Cloneable<InvertedResidualImpl> {
 public:
  InvertedResidualImpl(int64_t inPlanes, int64_t outPlanes, int64_t expansion, int64_t stride);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t inPlanes_;
  int64_t outPlanes_;
  int64_t expansion_;
  int64_t stride_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Conv2d conv3_{nullptr};
  torch::nn::BatchNorm2d bn3_{nullptr};
  torch::nn::Sequential shortcut_{nullptr};
};
TORCH_MODULE(InvertedResidual);

class MobileNetV2Impl : public ClassifierModule<MobileNetV2Impl> {
 public:
  explicit MobileNetV2Impl(ModelOptions options);
  void reset() override;
  torch::Tensor forward(torch::Tensor x) override;

 private:
  ModelOptions options_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Sequential layers_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Linear linear_{nullptr};
};

}  // namespace dtbench::models
