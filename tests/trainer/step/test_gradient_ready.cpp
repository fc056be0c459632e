// GradientReadyProbe on a small model: armed around backward, every trainable parameter gets a
// finite offset within the backward, the last layer's before the first's; a frozen parameter is
// not listed; a backward outside arm() ... disarm() records nothing; the hooks go with the probe.
#include "catch_torch.h"

#include <chrono>
#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/torch.h>

#include "trainer/step/gradient_ready.h"

using dtbench::trainer::GradientReadyProbe;

namespace {

struct TwoLayers : torch::nn::Module {
  TwoLayers() {
    first = register_module("first", torch::nn::Linear(64, 256));
    second = register_module("second", torch::nn::Linear(256, 10));
  }
  at::Tensor forward(const at::Tensor& x) { return second->forward(torch::relu(first->forward(x))); }
  torch::nn::Linear first{nullptr}, second{nullptr};
};

}  // namespace

TEST_CASE("the probe records when each gradient is ready, from the call of backward", "[gradient_ready]") {
  torch::manual_seed(1);
  TwoLayers model;
  model.first->bias.set_requires_grad(false);  // frozen: not listed
  const at::Tensor x = torch::randn({32, 64});

  GradientReadyProbe probe(model);
  REQUIRE(probe.parameters().size() == 3);
  CHECK(probe.parameters()[0].name == "first.weight");
  CHECK(probe.parameters()[0].elements == 64 * 256);
  CHECK(probe.parameters()[0].dtype == "float32");
  CHECK(probe.parameters()[2].name == "second.bias");
  REQUIRE(probe.readyS().size() == 3);
  for (double s : probe.readyS()) CHECK(std::isnan(s));

  for (int step = 0; step < 3; ++step) {
    const at::Tensor loss = model.forward(x).square().mean();
    const auto start = std::chrono::steady_clock::now();
    probe.arm();
    loss.backward();
    probe.disarm();
    const double backwardS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    model.zero_grad();
    INFO("step " << step);
    for (double s : probe.readyS()) {
      CHECK(std::isfinite(s));
      CHECK(s >= 0);
      CHECK(s <= backwardS);
    }
    // Backward produces the last layer's gradients first.
    CHECK(probe.readyS()[2] <= probe.readyS()[0]);
    CHECK(probe.readyS()[1] <= probe.readyS()[0]);
  }

  // Unarmed: the last armed backward's offsets stay as they were.
  const std::vector<double> before = probe.readyS();
  model.forward(x).sum().backward();
  CHECK(probe.readyS() == before);
}

TEST_CASE("the probe's hooks go with it", "[gradient_ready]") {
  TwoLayers model;
  const at::Tensor x = torch::randn({4, 64});
  { GradientReadyProbe probe(model); }
  model.forward(x).sum().backward();  // no hook of a destroyed probe runs
  CHECK(model.first->weight.grad().defined());
  // A second probe on the same model sees its own backward.
  GradientReadyProbe probe(model);
  probe.arm();
  model.forward(x).sum().backward();
  probe.disarm();
  for (double s : probe.readyS()) CHECK(std::isfinite(s));
}
