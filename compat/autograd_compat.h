#pragma once
// The handle of a parameter's gradient accumulator (the autograd Node its gradient lands in), which
// the gradient-ready probe and the bucketed all-reduce hook: torch::autograd::impl::grad_accumulator
// returns a std::shared_ptr<Node> up to LibTorch 2.14 and a c10::intrusive_ptr<Node> from 2.15.
// dtbench holds whichever this LibTorch returns; both keep the Node alive and give -> to it.

#include <utility>

#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/variable.h>

namespace dtbench::compat {

using GradAccumulatorPtr = decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

}  // namespace dtbench::compat
