#pragma once
// GradScaler: dynamic loss scaling for --amp fp16, with PyTorch's torch.amp.GradScaler defaults.
//
// fp16 has 5 exponent bits: small gradients of fp16 activations flush to zero. The loss is
// multiplied by the scale S before backward, so every gradient is S times larger; before the
// optimizer step they are divided by S again (exact: S is always a power of two). When a scaled
// gradient overflowed (inf or NaN in any of them), the optimizer step is skipped (parameters and
// optimizer state untouched) and S is halved; after `growthInterval` consecutive good steps S
// doubles. The step's order:
//
//   scaler.scale(loss).backward();      // scaled gradients
//   sync->afterBackward();              // ssgd: the scaled gradients are all-reduced (averaged)
//   scaler.step(optimizer);             // unscale + check, then step unless inf/NaN
//   scaler.update();                    // back off or grow S
//
// Note [loss scaling and the all-reduce]
// dtbench all-reduces the *scaled* gradients and unscales afterwards, as PyTorch's DDP does with
// its GradScaler. The reduction is a sum: one rank's inf or NaN makes the reduced element inf or
// NaN on every rank (inf + x = inf, inf + -inf = NaN, NaN + x = NaN), and every rank holds the same
// reduced values (the ssgd contract, checked by --check-every). So every rank finds the same
// overflow, skips the same steps and keeps the same S without a collective of its own: the
// found-inf flag is agreed by construction. Unscaling first would need that extra agreement (a
// rank could skip while another steps) and would send no fewer bytes. Gradients are fp32
// (parameters stay fp32 under autocast); a sum of N scaled gradients can overflow where each
// rank's did not (by at most a factor N), which costs one skipped step and a halved S, on every
// rank alike. Under --sync pairavg gradients are not
// reduced: each rank checks its own, may skip alone and keeps its own S (its parameters differ
// from its partners' anyway).
//
// Unscaling: CUDA gradients go through ATen's fused _amp_foreach_non_finite_check_and_unscale_
// (one kernel per device and type); elsewhere (the CPU, where 1.13 has no kernel for it) with
// ordinary ops: multiply by 1/S, then test isfinite. The scale lives on the host, a double: the
// decision to step needs the flag on the host anyway (as in PyTorch's GradScaler.step).

#include <cstdint>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>

namespace dtbench::trainer {

struct GradScalerOptions {
  double initScale = 65536.0;  // 2^16
  double growthFactor = 2.0;
  double backoffFactor = 0.5;
  int64_t growthInterval = 2000;  // good steps in a row before the scale grows
};

class GradScaler {
 public:
  // Throws std::invalid_argument for a scale <= 0, growth <= 1, backoff outside (0, 1) or an
  // interval < 1.
  explicit GradScaler(GradScalerOptions options = {});

  // loss x S, in fp32 (or the loss's type when wider): 2^16 itself is beyond fp16's range.
  at::Tensor scale(const at::Tensor& loss) const;

  // Divides every defined gradient of the optimizer's parameters by S in place and records
  // whether any gradient holds an inf or NaN; returns that. Once per step (std::logic_error
  // otherwise).
  bool unscale(torch::optim::Optimizer& optimizer);

  // Unscales (unless unscale() already did this step) and runs optimizer.step() when every
  // gradient is finite; returns whether it stepped.
  bool step(torch::optim::Optimizer& optimizer);

  // After step(): halves S after an overflow (the good-step count restarts), else counts the good
  // step and doubles S every growthInterval of them. std::logic_error without an unscale() first.
  void update();

  double lossScale() const { return scale_; }
  int64_t goodSteps() const { return goodSteps_; }        // since the last change of S
  int64_t skippedSteps() const { return skippedSteps_; }  // over the scaler's lifetime

  // For checkpoints: {"scale", "good_steps", "skipped_steps"}.
  nlohmann::json state() const;
  void restore(const nlohmann::json& state);

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t goodSteps_ = 0;
  int64_t skippedSteps_ = 0;
  bool unscaled_ = false;  // this step's gradients are already divided by S
  bool foundInf_ = false;  // ... and this is what the check found
};

}  // namespace dtbench::trainer
