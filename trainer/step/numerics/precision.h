#pragma once
// How a step computes: --amp (autocast's lower-precision type around forward and loss) and
// --channels-last (NHWC memory format for the model's 4-D tensors and the input batches).
//
// Autocast (ATen's, the mechanism behind Python's torch.autocast) runs the ops it lists for lower
// precision (convolutions, matrix products) in bf16 or fp16 and keeps the others in fp32;
// parameters and their gradients stay fp32, so the gradient synchronization and the optimizer see
// the same types as without --amp. Backward runs outside the scope: each op's backward follows the
// type its forward used. fp16 gradients can underflow: --amp fp16 adds loss scaling
// (trainer/step/numerics/grad_scaler.h); bf16 has fp32's exponent range and needs none.

#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>

#include "trainer/config.h"

namespace dtbench::trainer {

// The lower-precision type of an --amp value: bf16 -> BFloat16, fp16 -> Half, off -> none.
std::optional<at::ScalarType> ampDtype(Amp amp);

// RAII: autocast on `device` in `dtype` for the scope's lifetime, on this thread only (autocast's
// state is thread-local); the previous switch and type come back at the end, and the cache of
// lower-precision copies of the parameters is dropped when the outermost scope ends, so the next
// step casts the updated parameters again. With no dtype it does nothing (--amp off).
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, std::optional<at::ScalarType> dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool active_ = false;
  bool wasEnabled_ = false;
  at::ScalarType previousDtype_ = at::kFloat;
};

// Every 4-D parameter and buffer of `model` (convolution weights) to the channels-last memory
// format, in place: the tensors stay the same variables, so optimizers, hooks and gradient buckets
// that hold them keep working. Gradients then follow the parameters' strides.
void toChannelsLast(torch::nn::Module& model);

// A batch in channels-last format when `channelsLast` (4-D tensors only), else unchanged.
at::Tensor inMemoryFormat(const at::Tensor& batch, bool channelsLast);

}  // namespace dtbench::trainer
