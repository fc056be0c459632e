// bench_optimizer_step: the optimizer step alone, LibTorch's per-parameter torch::optim::SGD against
// the multi-tensor SGD of trainer/step/numerics/multi_tensor_optimizers.h, on a model's own parameters (momentum
// 0.9, weight decay 5e-4, as dtbench trains), for docs/benchmarks.md. The two step in turn, one
// step each, so that a machine whose load changes affects both alike. Built by CMake, not run by
// CTest. Usage: bench_optimizer_step [--steps N] [--device cpu|cuda] [MODEL...] (default: resnet18
// mobilenetv2, 60 steps, the first 5 left out). Prints one line per model: tensors, elements, the
// two medians in ms, and the largest difference of the parameters at the end (fp32 rounding).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/optim/sgd.h>

#include "models/classifier.h"
#include "models/registry.h"
#include "trainer/step/numerics/multi_tensor_optimizers.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Copies of `model`'s parameters on `device`, each with a random gradient.
std::vector<torch::Tensor> withGradients(const std::vector<torch::Tensor>& parameters, torch::Device device) {
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters) {
    out.push_back(p.detach().to(device).clone().requires_grad_());
    out.back().mutable_grad() = torch::randn_like(out.back());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 60;
  torch::Device device(torch::kCPU);
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc) {
      steps = std::max(6, std::atoi(argv[++i]));
    } else if (arg == "--device" && i + 1 < argc) {
      device = torch::Device(argv[++i]);
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "usage: bench_optimizer_step [--steps N] [--device cpu|cuda] [MODEL...]\n");
      return 2;
    } else {
      models.push_back(arg);
    }
  }
  if (models.empty()) models = {"resnet18", "mobilenetv2"};
  const auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  const auto options = torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4);
  for (const std::string& name : models) {
    torch::manual_seed(0);
    const auto model = dtbench::models::makeModel(name, {});
    const std::vector<torch::Tensor> parameters = model->module().parameters();
    std::vector<torch::Tensor> a = withGradients(parameters, device);
    std::vector<torch::Tensor> b;
    for (const auto& p : a) {
      b.push_back(p.detach().clone().requires_grad_());
      b.back().mutable_grad() = p.grad().clone();
    }
    torch::optim::SGD perParameter(a, options);
    dtbench::trainer::MultiTensorSGD multiTensor(b, options);
    std::vector<double> before, after;
    int64_t elements = 0;
    for (const auto& p : a) elements += p.numel();
    for (int i = 0; i < steps; ++i) {
      sync();
      const auto t0 = std::chrono::steady_clock::now();
      perParameter.step();
      sync();
      const auto t1 = std::chrono::steady_clock::now();
      multiTensor.step();
      sync();
      const auto t2 = std::chrono::steady_clock::now();
      if (i < 5) continue;
      before.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      after.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    double diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
    std::printf("%s,%s,%zu tensors,%lld elements,torch::optim::SGD %.3f ms,multi-tensor %.3f ms,max difference %.3g\n",
                name.c_str(), device.str().c_str(), a.size(), static_cast<long long>(elements), median(before),
                median(after), diff);
  }
  return 0;
}
