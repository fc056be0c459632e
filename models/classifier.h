#pragma once
// Classifier: what every model in the zoo is. An image classifier that maps a float batch
// [B, C, 32, 32] to logits [B, num_classes].
//
// Contract:
// - Every concrete model derives from torch::nn::Cloneable<Impl> as well, and builds all of its
//   parameters, buffers and children in reset(), so that clone() (and with it
//   torch::nn::parallel::data_parallel) produces an exact, independent copy.
// - Parameters are registered in the order of the reference Python definition
//   (kuangliu/pytorch-cifar), so parameters() lists them in the same order PyTorch does.
// - Module is a virtual base, so a model is both a Classifier and a Cloneable without a diamond.

#include <memory>

#include <torch/nn/module.h>

namespace dtbench::models {

class Classifier : public virtual torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

using ClassifierPtr = std::shared_ptr<Classifier>;

// What a model is built for: input channels (3 for CIFAR-10, 1 for Fashion-MNIST; only the
// first convolution changes) and the number of classes.
struct ModelOptions {
  int64_t inputChannels = 3;
  int64_t numClasses = 10;
};

}  // namespace dtbench::models
