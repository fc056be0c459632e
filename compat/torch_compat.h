#pragma once
// The differences between LibTorch 1.13 (Debian's libtorch-dev) and 2.x (CUDA builds), in one
// place. Everything else in dtbench is written against the API both versions share.

#include <chrono>

#include <torch/optim/optimizer.h>
#include <torch/version.h>

namespace dtbench::compat {

inline constexpr int kTorchMajor = TORCH_VERSION_MAJOR;
inline constexpr int kTorchMinor = TORCH_VERSION_MINOR;

inline const char* torchVersion() { return TORCH_VERSION; }

// Note [zero_grad in place]
// 1.13's Optimizer::zero_grad() zeroes gradients in place; 2.x's zero_grad(set_to_none = true)
// drops them. dtbench always zeroes in place: gradients keep their storage from step to step, so
// allocations stay out of the step and gradient views into communication buckets stay valid.
inline void zeroGradInPlace(torch::optim::Optimizer& optimizer) {
#if TORCH_VERSION_MAJOR >= 2
  optimizer.zero_grad(/*set_to_none=*/false);
#else
  optimizer.zero_grad();
#endif
}

// Note [Gloo options across versions]
// 1.13's ProcessGroupGloo derives from ProcessGroup and its Options from ProcessGroup::Options; 2.x's
// derives from Backend and Backend::Options (so a 2.x ProcessGroupGloo is no c10d::ProcessGroup:
// hold it as its own type). Both have Options::create(timeout), `devices` and `threads`; dtbench
// uses only those. A template, so this header needs no c10d include: GlooGroup is
// c10d::ProcessGroupGloo.
template <typename GlooGroup>
auto makeGlooOptions(std::chrono::milliseconds timeout, int threads) {
  auto options = GlooGroup::Options::create(timeout);
  options->threads = threads;
  return options;
}

}  // namespace dtbench::compat
