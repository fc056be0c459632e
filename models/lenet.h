#pragma once
// LeNet for 32x32 images, as kuangliu/pytorch-cifar defines it (lenet.py):
//   conv5x5(C -> 6) - relu - maxpool 2 - conv5x5(6 -> 16) - relu - maxpool 2
//   fc1(400 -> 120) - relu - fc2(120 -> 84) - relu - fc3(84 -> classes)
// Convolutions and linear layers have biases.
//
// Contract: parameters are registered in PyTorch's order under the Python attribute names
// (conv1, conv2, fc1, fc2, fc3). Everything is built in reset(), so clone() is an exact,
// independent deep copy.

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "models/classifier_module.h"

#include <memory>
#include <vector>

namespace dtbench::models {

class LeNetImpl : public ClassifierModule<LeNetImpl> {
 public:
  explicit LeNetImpl(ModelOptions options);
  void reset() override;
  torch::Tensor forward(torch::Tensor x) override;

 private:
  ModelOptions options_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr};
  torch::nn::Linear fc2_{nullptr};
  torch::nn::Linear fc3_{nullptr};
};

}  // namespace dtbench::models
