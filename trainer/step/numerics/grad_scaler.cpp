#include "trainer/step/numerics/grad_scaler.h"

#include <cfloat>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace dtbench::trainer {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.initScale) {
  if (!(options.initScale > 0)) throw std::invalid_argument("GradScaler: the initial scale must be > 0");
  if (!(options.growthFactor > 1)) throw std::invalid_argument("GradScaler: the growth factor must be > 1");
  if (!(options.backoffFactor > 0 && options.backoffFactor < 1))
    throw std::invalid_argument("GradScaler: the backoff factor must be in (0, 1)");
  if (options.growthInterval < 1) throw std::invalid_argument("GradScaler: the growth interval must be >= 1");
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const {
  // A fp16 loss times 2^16 would overflow in fp16: the product is taken in fp32 at least.
  const bool narrow = loss.scalar_type() == at::kHalf || loss.scalar_type() == at::kBFloat16;
  return (narrow ? loss.to(at::kFloat) : loss) * scale_;
}

bool GradScaler::unscale(torch::optim::Optimizer& optimizer) {
  if (unscaled_) throw std::logic_error("GradScaler::unscale: the gradients of this step are already unscaled");
  at::NoGradGuard noGrad;
  const double inverse = 1.0 / scale_;
  std::vector<at::Tensor> cpuChecks;                                            // per gradient: all finite
  std::map<std::pair<int, at::ScalarType>, std::vector<at::Tensor>> cudaGroups;  // (device index, type)
  for (auto& group : optimizer.param_groups()) {
    for (auto& parameter : group.params()) {
      if (!parameter.grad().defined()) continue;
      at::Tensor grad = parameter.mutable_grad();
      if (grad.is_cuda()) {
        cudaGroups[{grad.get_device(), grad.scalar_type()}].push_back(grad);
      } else {
        grad.mul_(inverse);
        cpuChecks.push_back(at::isfinite(grad).all());
      }
    }
  }
  bool found = !cpuChecks.empty() && !at::stack(cpuChecks).all().item<bool>();
  for (auto& [key, grads] : cudaGroups) {
    const auto options = grads.front().options().dtype(at::kFloat);
    at::Tensor foundInf = at::zeros({1}, options);
    const at::Tensor inverseScale = at::full({1}, inverse, options);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, inverseScale);
    found = found || foundInf.item<float>() != 0.0f;
  }
  unscaled_ = true;
  foundInf_ = found;
  return found;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!unscaled_) unscale(optimizer);
  if (foundInf_) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!unscaled_) throw std::logic_error("GradScaler::update: no unscale() or step() in this step");
  if (foundInf_) {
    scale_ *= options_.backoffFactor;
    goodSteps_ = 0;
    ++skippedSteps_;
  } else if (++goodSteps_ == options_.growthInterval) {
    // The scale multiplies fp32 losses: it grows only while it stays a finite float.
    if (scale_ * options_.growthFactor <= FLT_MAX) scale_ *= options_.growthFactor;
    goodSteps_ = 0;
  }
  unscaled_ = false;
  foundInf_ = false;
}

nlohmann::json GradScaler::state() const {
  return {{"scale", scale_}, {"good_steps", goodSteps_}, {"skipped_steps", skippedSteps_}};
}

void GradScaler::restore(const nlohmann::json& state) {
  const double scale = state.at("scale").get<double>();
  if (!(scale > 0)) throw std::invalid_argument("GradScaler::restore: the scale must be > 0");
  scale_ = scale;
  goodSteps_ = state.at("good_steps").get<int64_t>();
  skippedSteps_ = state.at("skipped_steps").get<int64_t>();
  unscaled_ = false;
  foundInf_ = false;
}

}  // namespace dtbench::trainer
