#pragma once
// Classifier: what every model in the zoo is. An image classifier that maps a float batch
// [B, C, 32, 32] to logits [B, num_classes], held as a ClassifierPtr.
//
// Contract:
// - module() is the model as a torch::nn::Module: parameters, buffers, train()/eval(), to(),
//   save and load. Parameters are registered in the order of the reference Python definition
//   (kuangliu/pytorch-cifar), so parameters() lists them in the same order PyTorch does.
// - Every concrete model derives from ClassifierModule<Impl> (models/classifier_module.h), which is a
//   torch::nn::Cloneable<Impl>, and builds all of its parameters, buffers and children in reset(),
//   so that cloneClassifier() (Cloneable::clone) produces an exact, independent copy and --mode dp
//   can replicate it.
//
// Note [Classifier is not a Module]
// Up to LibTorch 2.1, Cloneable<Impl> derived *virtually* from Module, so a model could be both a
// Classifier that was a Module and a Cloneable without two Module subobjects. Since 2.2
// Cloneable<Impl> derives plainly from Module: a Classifier that is also a Module makes every model
// a diamond with two Modules ("register_module is ambiguous"). So Classifier is an interface of its
// own, the Module is reached through module(), and the one Module base comes from Cloneable.

#include <memory>
#include <optional>

#include <c10/core/Device.h>
#include <torch/nn/module.h>

namespace dtbench::models {

class Classifier {
 public:
  virtual ~Classifier() = default;

  virtual torch::Tensor forward(torch::Tensor x) = 0;

  virtual torch::nn::Module& module() = 0;
  virtual const torch::nn::Module& module() const = 0;

  // --mode dp: forward through torch::nn::parallel::data_parallel, which replicates the model onto
  // every visible GPU (through clone()), scatters x, and gathers the logits on GPU 0. With one GPU
  // it is a plain forward. Throws std::logic_error in a build whose LibTorch has no CUDA.
  virtual torch::Tensor forwardDataParallel(torch::Tensor x) = 0;

 protected:
  Classifier() = default;
  Classifier(const Classifier&) = default;  // Cloneable::clone copy-constructs the model
  Classifier& operator=(const Classifier&) = default;
};

using ClassifierPtr = std::shared_ptr<Classifier>;

// A deep, independent copy of `model` (its Cloneable::clone), on `device` when one is given: same
// type, parameters and buffers in new storage, same training mode.
ClassifierPtr cloneClassifier(const Classifier& model, const std::optional<c10::Device>& device = std::nullopt);

// What a model is built for: input channels (3 for CIFAR-10, 1 for Fashion-MNIST; only the
// first convolution changes) and the number of classes. imagenetLayout (the ResNets and VGGs) builds
// the layout for ImageNet-sized images, torchvision's: for a ResNet a 7x7 stride-2 first
// convolution, a 3x3 stride-2 max pool and a global average pool before the classifier (ResNet-50
// with 1000 classes has 25,557,032 parameters); for a VGG the three-layer classifier over a 7x7
// pool (models/vgg.h).
struct ModelOptions {
  int64_t inputChannels = 3;
  int64_t numClasses = 10;
  bool imagenetLayout = false;
};

}  // namespace dtbench::models
