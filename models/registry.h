#pragma once
// The model registry: every model of the zoo by name, and its parameter statistics.

#include <cstdint>
#include <string>
#include <vector>

#include "models/classifier.h"

namespace dtbench::models {

// Names in the order `dtbench models` prints them: resnet18 resnet34 resnet50 resnet101
// resnet152 mobilenetv2 densenet121 densenet201 vgg11 vgg13 vgg16 vgg19 lenet.
const std::vector<std::string>& modelNames();

// Whether `name` (case-insensitive) is a model of the zoo.
bool isModelName(const std::string& name);

// Builds the model `name` (case-insensitive). Throws std::invalid_argument whose message lists
// every valid name when `name` is unknown, or when the options are impossible.
ClassifierPtr makeModel(const std::string& name, const ModelOptions& options = {});

struct ParameterStats {
  int64_t parameters = 0;  // trainable elements
  int64_t tensors = 0;     // trainable parameter tensors
  double fp32Megabytes() const { return static_cast<double>(parameters) * 4.0 / 1e6; }
};

ParameterStats parameterStats(const torch::nn::Module& module);

}  // namespace dtbench::models
