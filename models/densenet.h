#pragma once
// DenseNet-121 and DenseNet-201 for 32x32 images, as kuangliu/pytorch-cifar defines them
// (densenet.py), growth rate g = 32, reduction 0.5:
//   conv3x3(C -> 2g)
//   dense1 - trans1 - dense2 - trans2 - dense3 - trans3 - dense4
//     (dense blocks of 6/12/24/16 layers for 121, 6/12/48/32 for 201; every transition halves
//     the channels, rounding down, and the resolution)
//   bn - relu - avg_pool2d(4) - linear(-> classes)
// There is no relu or pooling right after conv1, exactly as in the reference.
//
// Contract: parameters and buffers are registered in PyTorch's order under the Python attribute
// names (conv1, dense1.0.bn1, dense1.0.conv1, trans1.bn, trans1.conv, ..., bn, linear).
// Everything is built in reset(), so clone() is an exact, independent deep copy.

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

// kuangliu's DenseNet `Bottleneck`: bn - relu - conv1x1(in -> 4g) - bn - relu - conv3x3(-> g),
// then cat([new features, input], channels): the new g channels come first.
class DenseLayerImpl : public torch::nn::Cloneable<DenseLayerImpl> {
 public:
  DenseLayerImpl(int64_t inPlanes, int64_t growthRate);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t inPlanes_;
  int64_t growthRate_;
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
};
TORCH_MODULE(DenseLayer);

// bn - relu - conv1x1(in -> out) - avg_pool2d(2).
class TransitionImpl : public torch::nn::Cloneable<TransitionImpl> {
 public:
  TransitionImpl(int64_t inPlanes, int64_t outPlanes);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t inPlanes_;
  int64_t outPlanes_;
  torch::nn::BatchNorm2d bn_{nullptr};
  torch::nn::Conv2d conv_{nullptr};
};
TORCH_MODULE(Transition);

struct DenseNetConfig {
  std::array<int64_t, 4> numLayers{6, 12, 24, 16};
  int64_t growthRate = 32;
  double reduction = 0.5;
};

// The configuration of DenseNet-`depth` for depth 121 or 201; throws std::invalid_argument for
// any other depth.
DenseNetConfig denseNetConfig(int depth);

class DenseNetImpl : public ClassifierModule<DenseNetImpl> {
 public:
  DenseNetImpl(DenseNetConfig config, ModelOptions options);
  void reset() override;
  torch::Tensor forward(torch::Tensor x) override;

 private:
  torch::nn::Sequential makeDense(int64_t inPlanes, int64_t numLayers) const;

  DenseNetConfig config_;
  ModelOptions options_;
  torch::nn::Conv2d conv1_{nullptr};
  std::array<torch::nn::Sequential, 4> dense_{{nullptr, nullptr, nullptr, nullptr}};
  std::array<Transition, 3> trans_{{nullptr, nullptr, nullptr}};
  torch::nn::BatchNorm2d bn_{nullptr};
  torch::nn::Linear linear_{nullptr};
};

}  // namespace dtbench::models
