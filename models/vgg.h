#pragma once
// VGG-11/13/16/19 with batch normalization for 32x32 images, as kuangliu/pytorch-cifar defines
// them (vgg.py):
//   features: for each entry of the configuration, conv3x3(with bias) - BatchNorm2d - ReLU, or
//             'M' = MaxPool2d(2, 2); then AvgPool2d(1, 1)
//   classifier: Linear(512 -> classes)
// After five 'M's a 32x32 image is 1x1x512, so the classifier sees 512 features.
// With ModelOptions::imagenetLayout, the classifier for ImageNet-sized images instead (torchvision's
// VGG, whose features lack the batch norms kept here): adaptive_avg_pool2d(7), then `classifier` =
// Linear(25088 -> 4096) - ReLU - Dropout - Linear(4096 -> 4096) - ReLU - Dropout - Linear(4096 -> classes).
//
// Contract: `features` is one Sequential, indexed as in Python (features.0 = first conv,
// features.1 = its BatchNorm, features.2 = ReLU, ...), so named_parameters() equals the Python
// state_dict keys. Everything is built in reset(), so clone() is an exact, independent deep copy.

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "models/classifier_module.h"

namespace dtbench::models {

class VggImpl : public ClassifierModule<VggImpl> {
 public:
  // depth is 11, 13, 16 or 19; any other depth throws std::invalid_argument.
  VggImpl(int depth, ModelOptions options);
  void reset() override;
  torch::Tensor forward(torch::Tensor x) override;

 private:
  int depth_;
  ModelOptions options_;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Linear classifier_{nullptr};           // 32x32 layout
  torch::nn::Sequential imagenetClassifier_{nullptr};  // ImageNet layout
};

}  // namespace dtbench::models
