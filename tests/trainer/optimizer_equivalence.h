#pragma once
// checkSameAsLibTorch: a multi-tensor optimizer (trainer/step/numerics/multi_tensor_optimizers.h) against LibTorch's
// own class, on two copies of the fixture model that get the same gradients each step; after every
// step the parameters and each parameter's state agree within fp32 rounding. Used on the CPU
// (test_optimizer.cpp) and on CUDA (test_gpu_training.cpp).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <torch/optim/optimizer.h>

#include "optimizer_fixture.h"

namespace dtbench::testing {

// The state tensors of one parameter, in a fixed order (undefined ones left out).
using StateTensors = std::function<std::vector<torch::Tensor>(const torch::optim::OptimizerParamState&)>;

inline bool closeInFp32(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && torch::allclose(a.cpu(), b.cpu(), /*rtol=*/1e-5, /*atol=*/1e-6);
}

// Parameters and states of `tested` equal those of `reference` (same layout of parameters).
inline void checkSameState(torch::nn::Sequential& referenceModel, torch::optim::Optimizer& reference,
                           torch::nn::Sequential& testedModel, torch::optim::Optimizer& tested,
                           const StateTensors& stateTensors, const std::string& when) {
  const std::vector<torch::Tensor> a = referenceModel->parameters();
  const std::vector<torch::Tensor> b = testedModel->parameters();
  REQUIRE(a.size() == b.size());
  CHECK(reference.state().size() == tested.state().size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(when << ", parameter " << i);
    CHECK(closeInFp32(a[i], b[i]));
    const auto ra = reference.state().find(a[i].unsafeGetTensorImpl());
    const auto rb = tested.state().find(b[i].unsafeGetTensorImpl());
    REQUIRE((ra == reference.state().end()) == (rb == tested.state().end()));
    if (ra == reference.state().end()) continue;
    const std::vector<torch::Tensor> sa = stateTensors(*ra->second);
    const std::vector<torch::Tensor> sb = stateTensors(*rb->second);
    REQUIRE(sa.size() == sb.size());
    for (size_t k = 0; k < sa.size(); ++k) CHECK(closeInFp32(sa[k], sb[k]));
  }
}

// `steps` steps of both optimizers (made by the factories over their model's parameters) from the
// same initial model on `device`; every step compared, the first included. The parameters must move.
inline void checkSameAsLibTorch(
    const std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)>& makeReference,
    const std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)>& makeTested,
    const StateTensors& stateTensors, torch::Device device, int64_t steps = 5) {
  torch::manual_seed(1);
  torch::nn::Sequential referenceModel = fixtureModel();
  torch::nn::Sequential testedModel = fixtureModel();
  {
    torch::NoGradGuard noGrad;
    for (size_t i = 0; i < referenceModel->parameters().size(); ++i)
      testedModel->parameters()[i].copy_(referenceModel->parameters()[i]);
  }
  referenceModel->to(device);
  testedModel->to(device);
  std::vector<torch::Tensor> initial;
  for (const auto& p : referenceModel->parameters()) initial.push_back(p.detach().clone());
  const auto reference = makeReference(referenceModel->parameters());
  const auto tested = makeTested(testedModel->parameters());
  for (int64_t step = 1; step <= steps; ++step) {
    fixtureGradients(referenceModel, step, device);
    fixtureGradients(testedModel, step, device);
    reference->step();
    tested->step();
    checkSameState(referenceModel, *reference, testedModel, *tested, stateTensors, "step " + std::to_string(step));
  }
  for (size_t i = 0; i < initial.size(); ++i) CHECK_FALSE(torch::equal(initial[i], testedModel->parameters()[i].detach()));
}

}  // namespace dtbench::testing
