// dtbench's models against Python PyTorch's definitions of kuangliu/pytorch-cifar: names and
// shapes of parameters and buffers (so named_parameters() keys are the Python state_dict keys),
// and logits of a deterministic forward pass.
//
// The expected files are written by generate_expected.py from Python reference definitions;
// regenerate them with: scripts/torch_python tests/models/generate_expected.py

#include "catch_torch.h"
#include "models/classifier.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "dtbench/build_config.h"
#include "models/registry.h"

namespace models = dtbench::models;

namespace {

constexpr int64_t kForwardBatch = 2;  // generate_expected.py's FORWARD_BATCH

struct ReferenceFile {
  std::vector<std::string> stateLines;  // "parameter <name> <shape>" and "buffer <name> <shape>"
  std::vector<double> output;           // empty when the file has no forward reference
};

ReferenceFile readReference(const std::string& model) {
  const std::string path =
      std::string(DTBENCH_SOURCE_DIR) + "/tests/models/expected/" + model + ".txt";
  std::ifstream in(path);
  REQUIRE(in.good());
  ReferenceFile reference;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    if (line.rfind("output ", 0) == 0) {
      std::istringstream values(line.substr(7));
      double value = 0.0;
      while (values >> value) {
        reference.output.push_back(value);
      }
    } else {
      reference.stateLines.push_back(line);
    }
  }
  return reference;
}

std::string shapeText(const torch::Tensor& tensor) {
  if (tensor.dim() == 0) {
    return "scalar";
  }
  std::string text;
  for (const auto size : tensor.sizes()) {
    text += (text.empty() ? "" : " ") + std::to_string(size);
  }
  return text;
}

std::vector<std::string> stateLines(const torch::nn::Module& model) {
  std::vector<std::string> lines;
  for (const auto& parameter : model.named_parameters()) {
    lines.push_back("parameter " + parameter.key() + " " + shapeText(parameter.value()));
  }
  for (const auto& buffer : model.named_buffers()) {
    lines.push_back("buffer " + buffer.key() + " " + shapeText(buffer.value()));
  }
  return lines;
}

// generate_expected.py's deterministic_values: 0.5 sin(0.7 i + 1.3 salt), float64 -> float32.
torch::Tensor deterministicValues(int64_t count, int64_t salt) {
  const auto i = torch::arange(count, torch::kFloat64);
  return (torch::sin(i * 0.7 + 1.3 * static_cast<double>(salt)) * 0.5).to(torch::kFloat32);
}

void deterministicFill(torch::nn::Module& model) {
  torch::NoGradGuard noGrad;
  int64_t salt = 0;
  for (auto& parameter : model.parameters()) {
    parameter.copy_(deterministicValues(parameter.numel(), salt++).view(parameter.sizes()));
  }
}

}  // namespace

TEST_CASE("parameter and buffer names and shapes equal the Python state_dict",
          "[models][reference]") {
  for (const auto& name : models::modelNames()) {
    INFO("model " << name);
    const auto reference = readReference(name);
    const auto actual = stateLines(models::makeModel(name)->module());
    const auto mismatch = std::mismatch(actual.begin(), actual.end(),
                                        reference.stateLines.begin(), reference.stateLines.end());
    const std::string firstActual = mismatch.first == actual.end() ? "(end)" : *mismatch.first;
    const std::string firstExpected =
        mismatch.second == reference.stateLines.end() ? "(end)" : *mismatch.second;
    INFO("first difference: dtbench '" << firstActual << "', PyTorch '" << firstExpected << "'");
    CHECK(actual.size() == reference.stateLines.size());
    CHECK(mismatch.first == actual.end());
  }
}

TEST_CASE("resnet18 lists its parameters in PyTorch's order", "[models][reference]") {
  const auto parameters = models::makeModel("resnet18")->module().named_parameters();
  REQUIRE(parameters.size() == 62);
  CHECK(parameters[0].key() == "conv1.weight");
  CHECK(parameters[0].value().sizes() == torch::IntArrayRef({64, 3, 3, 3}));
  CHECK(parameters[1].key() == "bn1.weight");
  CHECK(parameters[3].key() == "layer1.0.conv1.weight");
  CHECK(parameters[parameters.size() - 2].key() == "linear.weight");
  CHECK(parameters[parameters.size() - 2].value().sizes() == torch::IntArrayRef({10, 512}));
  CHECK(parameters[parameters.size() - 1].key() == "linear.bias");
  CHECK(parameters[parameters.size() - 1].value().sizes() == torch::IntArrayRef({10}));
  CHECK(parameters.contains("layer2.0.shortcut.0.weight"));
  CHECK(parameters.contains("layer2.0.shortcut.1.bias"));
  CHECK_FALSE(parameters.contains("layer1.0.shortcut.0.weight"));
}

TEST_CASE("submodules carry PyTorch's attribute names", "[models][reference]") {
  const auto mobilenet = models::makeModel("mobilenetv2")->module().named_parameters();
  CHECK(mobilenet.contains("layers.0.shortcut.0.weight"));
  CHECK(mobilenet.contains("layers.16.conv3.weight"));
  CHECK(mobilenet.contains("conv2.weight"));
  const auto densenet = models::makeModel("densenet121")->module().named_parameters();
  CHECK(densenet.contains("dense1.0.conv1.weight"));
  CHECK(densenet.contains("trans1.conv.weight"));
  CHECK(densenet.contains("trans3.bn.bias"));
  CHECK(densenet.contains("dense4.15.conv2.weight"));
  CHECK(densenet.contains("bn.weight"));
  const auto vgg = models::makeModel("vgg11")->module().named_parameters();
  CHECK(vgg.contains("features.0.weight"));
  CHECK(vgg.contains("features.1.running_mean") == false);
  CHECK(vgg.contains("classifier.weight"));
  const auto lenet = models::makeModel("lenet")->module().named_parameters();
  CHECK(lenet.keys() == std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight",
                                                 "conv2.bias", "fc1.weight", "fc1.bias",
                                                 "fc2.weight", "fc2.bias", "fc3.weight",
                                                 "fc3.bias"});
}

TEST_CASE("forward passes equal Python PyTorch's on deterministic weights",
          "[models][reference]") {
  int forwardModels = 0;
  for (const auto& name : models::modelNames()) {
    const auto reference = readReference(name);
    if (reference.output.empty()) {
      continue;
    }
    ++forwardModels;
    INFO("model " << name);
    const auto model = models::makeModel(name);
    deterministicFill(model->module());
    model->module().train();
    torch::NoGradGuard noGrad;
    const auto input = deterministicValues(kForwardBatch * 3 * 32 * 32, -1)
                           .view({kForwardBatch, 3, 32, 32});
    const auto logits = model->forward(input).to(torch::kFloat64).flatten();
    REQUIRE(logits.numel() == static_cast<int64_t>(reference.output.size()));
    const auto expected = torch::tensor(reference.output, torch::kFloat64);
    const double scale = std::max(1.0, expected.abs().max().item<double>());
    const double error = (logits - expected).abs().max().item<double>();
    // The expected logits come from the torch dtbench builds against (scripts/torch_python): the
    // same kernels, so they agree to rounding. 1e-5 of their scale leaves room for other builds; a
    // wrong concatenation order in DenseNet's layers is already off by 2.5e-3, a missing ReLU by far more.
    INFO("max |dtbench - PyTorch| = " << error << " at logit scale " << scale);
    CHECK(error <= 1e-5 * scale);
  }
  CHECK(forwardModels >= 5);
}
