#pragma once
// The handle of a parameter's gradient accumulator (the autograd Node its gradient lands in), which
// the gradient-ready probe and the bucketed all-reduce hook: torch::autograd::impl::grad_accumulator
// returns a std::shared_ptr<Node> up to LibTorch 2.14 and a c10::intrusive_ptr<Node> from 2.15.
// dtbench holds whichever this LibTorch returns; both keep the Node alive and give -> to it.
// AccumulatorHooks: the one way dtbench hooks them.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace dtbench::compat {

using GradAccumulatorPtr = decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

// A post-hook on the gradient accumulator of each of `parameters` (which must require grad): every run
// of the i-th one's accumulator calls onReady(i), where autograd runs it (the calling thread on the
// CPU, the device's autograd thread on a GPU). The destructor removes the hooks; it holds the
// accumulators, so the model may go first. Used by the gradient-ready probe and the bucketed
// all-reduce, each with hooks of its own.
class AccumulatorHooks {
 public:
  AccumulatorHooks(const std::vector<at::Tensor>& parameters, const std::function<void(size_t)>& onReady) {
    for (size_t i = 0; i < parameters.size(); ++i) {
      GradAccumulatorPtr accumulator = torch::autograd::impl::grad_accumulator(parameters[i]);
      keys_.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [onReady, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
            onReady(i);
            return outputs;
          })));
      accumulators_.push_back(std::move(accumulator));
    }
  }
  ~AccumulatorHooks() {
    for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(keys_[i]);
  }
  AccumulatorHooks(const AccumulatorHooks&) = delete;
  AccumulatorHooks& operator=(const AccumulatorHooks&) = delete;

 private:
  std::vector<GradAccumulatorPtr> accumulators_;
  std::vector<uintptr_t> keys_;
};

}  // namespace dtbench::compat
