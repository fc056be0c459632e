#pragma once
// GraphedTrainStep: --cuda-graph's training step of one rank, recorded once into a DeviceGraph
// (trainer/step/graph/device_graph.h) and replayed for every later batch of the same shape (docs/gpu.md,
// "CUDA graphs"):
//
//   GraphedTrainStep step({model, sgd, ampDtype, channelsLast, device}, cudaDeviceGraph(device));
//   step.load(images, labels);   // copied into the step's static inputs: the h2d phase
//   if (!step.captured()) step.capture();   // records the step on them; runs nothing
//   step.replay();               // the learning rates into their tensors, then the recorded work
//   step.outputs();              // float32 [loss, right answers] of that replay, on the device
//
// What is recorded: forward and the cross-entropy loss (under autocast with --amp bf16, its cache
// of lower-precision weights off, so each replay casts the weights the optimizer just wrote), the
// count of right answers, backward (the gradients land in the parameters' existing .grad tensors),
// the fused SGD step reading its learning rate from a device tensor
// (MultiTensorSGD::keepLearningRatesInTensors, done here), and the in-place zeroing of the
// gradients. Everything a replay reads is a tensor with a fixed address: the static inputs, the
// parameters and buffers, the momentum buffers, the learning rates. The step must have run eagerly
// on the capture's stream before the capture (kWarmupSteps): the momentum buffers, the gradients, cuDNN's
// chosen algorithms and cuBLAS's workspace then exist, and the capture allocates none of them.
//
// A batch of another shape (an epoch's last, smaller batch) does not fit the static inputs:
// accepts() is false and the caller takes the eager step (trainer/step/train_step.h).

#include <memory>
#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "models/classifier.h"
#include "trainer/step/graph/device_graph.h"
#include "trainer/step/numerics/multi_tensor_optimizers.h"

namespace dtbench::trainer {

struct GraphedTrainStepParts {
  models::ClassifierPtr model;
  MultiTensorSGD& optimizer;
  std::optional<at::ScalarType> ampDtype;
  bool channelsLast = false;
  c10::Device device;
};

class GraphedTrainStep {
 public:
  // Eager steps on the capture's stream before the capture.
  static constexpr int kWarmupSteps = 3;

  GraphedTrainStep(GraphedTrainStepParts parts, std::unique_ptr<DeviceGraph> graph);

  // Whether a batch of these shapes and types fits the static inputs (any does before the first load).
  bool accepts(const at::Tensor& images, const at::Tensor& labels) const;
  // Copies the batch into the static inputs on the current stream (allocated at the first load).
  void load(const at::Tensor& images, const at::Tensor& labels);
  bool captured() const { return captured_; }
  // Records the step on the loaded inputs; nothing runs. Once.
  void capture();
  // Writes the learning rates, then queues the recorded step.
  void replay();
  // The optimizer's learning-rate tensors from its groups' options: before an eager step, whose
  // fused SGD reads them as well.
  void refreshLearningRates() { p_.optimizer.refreshLearningRates(); }
  // [loss, number of right answers] (float32, on the device) of the last replay.
  const at::Tensor& outputs() const { return outputs_; }

 private:
  void body();

  GraphedTrainStepParts p_;
  std::unique_ptr<DeviceGraph> graph_;
  at::Tensor images_;  // the static inputs
  at::Tensor labels_;
  at::Tensor outputs_;
  bool captured_ = false;
};

}  // namespace dtbench::trainer
