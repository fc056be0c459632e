#pragma once
// ClassifierModule<Impl>: the base of every model of the zoo (CRTP). It is the model's one
// torch::nn::Module (through torch::nn::Cloneable<Impl>, which gives clone()) and its Classifier
// face (models/classifier.h, Note [Classifier is not a Module]). Impl implements forward() and
// reset(); reset() builds every parameter, buffer and child, as Cloneable requires.

#include <memory>
#include <stdexcept>

#include <torch/nn/cloneable.h>

#include "dtbench/build_config.h"
#include "models/classifier.h"
#if DTBENCH_TORCH_HAS_CUDA
// Needs CUDA's headers (through ATen/cuda), which only a CUDA build of LibTorch brings.
#include <torch/nn/parallel/data_parallel.h>
#endif

namespace dtbench::models {

template <typename Impl>
class ClassifierModule : public torch::nn::Cloneable<Impl>, public Classifier {
 public:
  torch::nn::Module& module() override { return *this; }
  const torch::nn::Module& module() const override { return *this; }

  torch::Tensor forwardDataParallel(torch::Tensor x) override {
#if DTBENCH_TORCH_HAS_CUDA
    // data_parallel needs the concrete type: it casts each replica that clone() returns to it.
    return torch::nn::parallel::data_parallel(std::static_pointer_cast<Impl>(this->shared_from_this()), std::move(x));
#else
    (void)x;
    throw std::logic_error("--mode dp needs a CUDA build of LibTorch; this one has none");
#endif
  }
};

}  // namespace dtbench::models
