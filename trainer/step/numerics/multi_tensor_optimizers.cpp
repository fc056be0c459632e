#include "trainer/step/numerics/multi_tensor_optimizers.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_addcdiv.h>
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/_foreach_div.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_sqrt.h>
#include <ATen/ops/_fused_sgd.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/empty_like.h>
#include <torch/utils.h>

namespace dtbench::trainer {

namespace {

using torch::Tensor;

// The loss of the closure, when one is given (LibTorch's step(closure) contract).
Tensor evaluate(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode enable(true);
  return closure();
}

// The tensors one multi-tensor call updates: parameters, their gradients and their state.
struct TensorLists {
  std::vector<Tensor> params;
  std::vector<Tensor> grads;
  std::vector<Tensor> first;   // SGD: momentum buffers; Adam: exp_avg; RMSprop: square_avg
  std::vector<Tensor> second;  // Adam: exp_avg_sq; RMSprop: momentum buffers (momentum > 0)
  std::vector<Tensor> third;   // RMSprop centered: grad_avg

  void add(const Tensor& p, const Tensor& g) {
    params.push_back(p);
    grads.push_back(g);
  }
};

// g + wd·p as a new list (LibTorch's grad.add(p, wd): the gradients themselves stay as they are).
std::vector<Tensor> withWeightDecay(const TensorLists& lists, double weightDecay) {
  if (weightDecay == 0) return lists.grads;
  return at::_foreach_add(lists.grads, lists.params, weightDecay);
}

}  // namespace

Tensor MultiTensorSGD::step(LossClosure closure) {
  const Tensor loss = evaluate(closure);
  torch::NoGradGuard noGrad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    TensorLists later;  // momentum buffers that exist (or no momentum at all)
    TensorLists first;  // the first step of a parameter with momentum: its buffer becomes d
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      const Tensor& g = p.grad();
      if (o.momentum() == 0) {
        later.add(p, g);
        continue;
      }
      auto found = state_.find(p.unsafeGetTensorImpl());
      if (found != state_.end()) {
        later.add(p, g);
        later.first.push_back(static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer());
      } else {
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(at::empty_like(g));
        first.add(p, g);
        first.first.push_back(state->momentum_buffer());
        state_[p.unsafeGetTensorImpl()] = std::move(state);
      }
    }
    const size_t index = static_cast<size_t>(&group - param_groups_.data());
    for (auto* lists : {&later, &first}) {
      if (lists->params.empty()) continue;
      if (lrDevice_) {
        TORCH_CHECK(index < lrTensors_.size(), "MultiTensorSGD: refreshLearningRates() before the first step");
        at::_fused_sgd_(lists->params, lists->grads, lists->first, o.weight_decay(), o.momentum(), lrTensors_[index],
                        o.dampening(), o.nesterov(), /*maximize=*/false, /*is_first_step=*/lists == &first);
      } else {
        at::_fused_sgd_(lists->params, lists->grads, lists->first, o.weight_decay(), o.momentum(), o.lr(),
                        o.dampening(), o.nesterov(), /*maximize=*/false, /*is_first_step=*/lists == &first);
      }
    }
  }
  return loss;
}

void MultiTensorSGD::keepLearningRatesInTensors(c10::Device device) {
  lrDevice_ = device;
  lrTensors_.clear();
  lrWritten_.clear();
  refreshLearningRates();
}

void MultiTensorSGD::refreshLearningRates() {
  if (!lrDevice_) return;
  for (size_t k = 0; k < param_groups_.size(); ++k) {
    const double lr = static_cast<const torch::optim::SGDOptions&>(param_groups_[k].options()).lr();
    if (k == lrTensors_.size()) {
      lrTensors_.push_back(at::empty({}, at::TensorOptions().dtype(at::kFloat).device(*lrDevice_)));
      lrWritten_.push_back(lr);
    } else if (lrWritten_[k] == lr) {
      continue;
    }
    lrTensors_[k].fill_(lr);
    lrWritten_[k] = lr;
  }
}

Tensor MultiTensorAdam::step(LossClosure closure) {
  for (const auto& group : param_groups_)
    if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad()) return torch::optim::Adam::step(closure);
  const Tensor loss = evaluate(closure);
  torch::NoGradGuard noGrad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::AdamOptions&>(group.options());
    std::map<int64_t, TensorLists> byStep;
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto found = state_.find(p.unsafeGetTensorImpl());
      if (found == state_.end()) {
        auto state = std::make_unique<torch::optim::AdamParamState>();
        state->step(0);
        state->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        state->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        found = state_.emplace(p.unsafeGetTensorImpl(), std::move(state)).first;
      }
      auto& state = static_cast<torch::optim::AdamParamState&>(*found->second);
      state.step(state.step() + 1);
      TensorLists& lists = byStep[state.step()];
      lists.add(p, p.grad());
      lists.first.push_back(state.exp_avg());
      lists.second.push_back(state.exp_avg_sq());
    }
    const double beta1 = std::get<0>(o.betas());
    const double beta2 = std::get<1>(o.betas());
    for (auto& [step, lists] : byStep) {
      const std::vector<Tensor> grads = withWeightDecay(lists, o.weight_decay());
      at::_foreach_mul_(lists.first, beta1);
      at::_foreach_add_(lists.first, grads, 1 - beta1);
      at::_foreach_mul_(lists.second, beta2);
      at::_foreach_addcmul_(lists.second, grads, grads, 1 - beta2);
      const double biasCorrection1 = 1 - std::pow(beta1, static_cast<double>(step));
      const double biasCorrection2 = 1 - std::pow(beta2, static_cast<double>(step));
      std::vector<Tensor> denom = at::_foreach_sqrt(lists.second);
      at::_foreach_div_(denom, std::sqrt(biasCorrection2));
      at::_foreach_add_(denom, o.eps());
      at::_foreach_addcdiv_(lists.params, lists.first, denom, -o.lr() / biasCorrection1);
    }
  }
  return loss;
}

Tensor MultiTensorRMSprop::step(LossClosure closure) {
  const Tensor loss = evaluate(closure);
  torch::NoGradGuard noGrad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::RMSpropOptions&>(group.options());
    TensorLists lists;
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto found = state_.find(p.unsafeGetTensorImpl());
      if (found == state_.end()) {
        auto state = std::make_unique<torch::optim::RMSpropParamState>();
        state->step(0);
        state->square_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.momentum() > 0) state->momentum_buffer(at::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.centered()) state->grad_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        found = state_.emplace(p.unsafeGetTensorImpl(), std::move(state)).first;
      }
      auto& state = static_cast<torch::optim::RMSpropParamState&>(*found->second);
      state.step(state.step() + 1);
      lists.add(p, p.grad());
      lists.first.push_back(state.square_avg());
      if (o.momentum() > 0) lists.second.push_back(state.momentum_buffer());
      if (o.centered()) lists.third.push_back(state.grad_avg());
    }
    if (lists.params.empty()) continue;
    const double alpha = o.alpha();
    const std::vector<Tensor> grads = withWeightDecay(lists, o.weight_decay());
    at::_foreach_mul_(lists.first, alpha);
    at::_foreach_addcmul_(lists.first, grads, grads, 1 - alpha);
    std::vector<Tensor> avg;
    if (o.centered()) {
      at::_foreach_mul_(lists.third, alpha);
      at::_foreach_add_(lists.third, grads, 1 - alpha);
      avg = at::_foreach_addcmul(lists.first, lists.third, lists.third, -1);
      at::_foreach_sqrt_(avg);
    } else {
      avg = at::_foreach_sqrt(lists.first);
    }
    at::_foreach_add_(avg, o.eps());
    if (o.momentum() > 0) {
      at::_foreach_mul_(lists.second, o.momentum());
      at::_foreach_addcdiv_(lists.second, grads, avg);
      at::_foreach_add_(lists.params, lists.second, -o.lr());
    } else {
      at::_foreach_addcdiv_(lists.params, grads, avg, -o.lr());
    }
  }
  return loss;
}

}  // namespace dtbench::trainer
