#pragma once
// countFlops: the arithmetic of a model's forward pass and training step per image, counted from the
// shapes of the layers as they run (docs/report.md, "FLOPs and the speed of light").
//
// How: the model runs one forward pass on one image (eval mode, gradients on, so that every tensor
// says whether its gradient will be computed) while a thread-local ATen RecordFunction observer
// sees each operator with its input and output shapes. Counted, at the outermost such operator only
// (aten::conv2d calls aten::convolution, which calls a backend's kernel: one count):
// - matmul layers, in multiply-adds (MACs): a convolution, any groups, stride, padding or dilation:
//   output elements x (input channels / groups) x kernel height x kernel width (a transposed one:
//   input elements x (output channels / groups) x kernel area); a linear layer, addmm, mm, bmm and
//   matmul: output elements x the reduced dimension. A bias add is not a MAC.
// - the backward of each matmul layer: one product of the forward's size for each of its two
//   operands whose gradient is computed: the weight's gradient (a trainable weight) and the
//   input's gradient (an input that needs one). So the backward is 2x the forward, less the first
//   layer's input gradient, which nothing asks for. This holds for grouped and depthwise
//   convolutions alike (each of the two gradients of a grouped convolution is a grouped convolution
//   of the forward's size), where PyTorch's FlopCounterMode counts their backward as if ungrouped.
// - elementwise work apart, not in the matmul FLOPs: the output elements of every batch norm,
//   activation, addition and pooling of the forward pass, and the loss (log-softmax and its pick:
//   one per logit).
// FLOPs are 2 x MACs (PyTorch's FlopCounterMode convention).

#include <cstdint>
#include <map>
#include <string>

#include "models/classifier.h"

namespace dtbench::models {

struct FlopCount {
  int64_t forwardMacs = 0;     // the matmul layers of the forward pass, per image
  int64_t backwardMacs = 0;    // their backward: weight and input gradients, per image
  int64_t elementwiseOps = 0;  // batch norm, activations, additions, pooling and the loss, per image
  // Per operator kind ("convolution", "linear"): forward and backward MACs, for the peaks of their
  // precisions (a run's convolutions and matrix products may run in different ones) and the tests.
  std::map<std::string, int64_t> forwardMacsByKind;
  std::map<std::string, int64_t> backwardMacsByKind;
  int64_t trainingMacs(const std::string& kind) const;  // forward + backward of that kind; 0 for none

  double forwardFlops() const { return 2.0 * static_cast<double>(forwardMacs); }
  double backwardFlops() const { return 2.0 * static_cast<double>(backwardMacs); }
  // Forward + backward: the training step's matmul FLOPs per image (the optimizer's elementwise
  // update is not counted).
  double trainingFlops() const { return forwardFlops() + backwardFlops(); }
};

// Counts `model` on one channels x imageSize x imageSize image on the CPU, with its trainable
// parameters as they are (requires_grad) and its train/eval mode restored afterwards. Throws
// std::invalid_argument when the model does not take that image (the message of its forward) or
// gives other than `classes` logits.
FlopCount countFlops(Classifier& model, int64_t channels, int64_t imageSize, int64_t classes);

// The zoo's layout for an image size: ResNets and VGGs (name in any case) take their ImageNet layout
// at 64 pixels and more, as `dtbench predict --describe-model` builds them.
ModelOptions optionsForImageSize(const std::string& name, int64_t channels, int64_t imageSize, int64_t classes);

// countFlops of the zoo model `name` built by optionsForImageSize.
FlopCount countModelFlops(const std::string& name, int64_t channels = 3, int64_t imageSize = 32,
                          int64_t classes = 10);

}  // namespace dtbench::models
