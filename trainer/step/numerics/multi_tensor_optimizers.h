#pragma once
// SGD, Adam and RMSprop that update every parameter of a group in a few multi-tensor kernels
// (at::_fused_sgd_, the at::_foreach_ ops), as PyTorch's Python optimizers do by default on CUDA,
// where LibTorch's torch::optim classes launch several kernels per parameter (MobileNetV2 has 158).
//
// Each derives from LibTorch's class and replaces only step(): the options, the per-parameter state
// (the same OptimizerParamState types, keyed the same way) and so save()/load() are LibTorch's, so
// a checkpoint written by either class loads into the other. The arithmetic is LibTorch's, in the
// same order of operations, so the results equal torch::optim's within fp32 rounding:
//
//   SGD      d = g + wd·p;  first step: buf = d;  later: buf = momentum·buf + (1 − dampening)·d;
//            d = nesterov ? d + momentum·buf : buf;  p −= lr·d          (one at::_fused_sgd_ per group)
//   Adam     g += wd·p;  m = β1·m + (1 − β1)·g;  v = β2·v + (1 − β2)·g²;
//            p −= lr / (1 − β1^t) · m / (√v / √(1 − β2^t) + eps)        (≈ 9 _foreach_ kernels per group)
//   RMSprop  g += wd·p;  s = α·s + (1 − α)·g²;  a = √s + eps (centered: √(s − ḡ²) + eps);
//            momentum: buf = momentum·buf + g / a, p −= lr·buf; else p −= lr · g / a
//
// Parameters without a gradient are skipped, as LibTorch does. A group's parameters are updated
// together per state: SGD's first-step buffers apart from the others, Adam's and RMSprop's by their
// step count (equal for all in a normal run). Adam with amsgrad falls back to LibTorch's step().
// The tensors of a group may differ in device and dtype: the _foreach_ ops then take their
// per-tensor path, with the same results.

#include <optional>
#include <vector>

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

namespace dtbench::trainer {

class MultiTensorSGD : public torch::optim::SGD {
 public:
  using torch::optim::SGD::SGD;
  torch::Tensor step(LossClosure closure = nullptr) override;

  // --cuda-graph (trainer/step/graph/graphed_train_step.h): from now on step() reads each group's learning rate from
  // a one-element float32 tensor on `device` (at::_fused_sgd_'s tensor overload), so that a step
  // recorded once uses the rate of each replay; refreshLearningRates() copies every group's lr()
  // into its tensor (a kernel only where the value changed) and must run before each replay, outside
  // the capture. Groups added later get theirs at the next refresh.
  void keepLearningRatesInTensors(c10::Device device);
  void refreshLearningRates();

 private:
  std::optional<c10::Device> lrDevice_;
  std::vector<torch::Tensor> lrTensors_;  // [group]
  std::vector<double> lrWritten_;         // [group]: the value in lrTensors_ (written only when it changes)
};

class MultiTensorAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

class MultiTensorRMSprop : public torch::optim::RMSprop {
 public:
  using torch::optim::RMSprop::RMSprop;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace dtbench::trainer
