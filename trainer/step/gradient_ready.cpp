#include "trainer/step/gradient_ready.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <c10/core/ScalarType.h>
#include <torch/csrc/autograd/variable.h>

#include "comm/element_type.h"
#include "comm/tensor_element_type.h"
#include "trainer/sync/flat_tensors.h"

namespace dtbench::trainer {
namespace {

// comm/element_type.h's name (float32, float16, bfloat16), or LibTorch's for a type comm/ does
// not carry (no model of dtbench has one).
std::string typeName(at::ScalarType type) {
  try {
    return comm::name(comm::elementTypeOf(type));
  } catch (const std::invalid_argument&) {
    return c10::toString(type);
  }
}

}  // namespace

GradientReadyProbe::GradientReadyProbe(torch::nn::Module& model) {
  std::vector<at::Tensor> trainable;
  for (const auto& item : model.named_parameters()) {
    if (!item.value().requires_grad()) continue;
    parameters_.push_back(
        {item.key(), item.value().numel(), typeName(item.value().scalar_type()), item.value().sizes().vec()});
    trainable.push_back(item.value());
  }
  readyS_.assign(parameters_.size(), std::numeric_limits<double>::quiet_NaN());
  bufferElements_ = totalElements(floatingBuffers(model));
  hooks_.emplace(trainable, [this](size_t i) { gradientReady(i); });
}

void GradientReadyProbe::arm() {
  readyS_.assign(readyS_.size(), std::numeric_limits<double>::quiet_NaN());
  armed_ = true;
  start_ = std::chrono::steady_clock::now();
}

void GradientReadyProbe::gradientReady(size_t parameter) {
  if (!armed_ || !std::isnan(readyS_[parameter])) return;  // outside a step, or a reused parameter
  readyS_[parameter] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace dtbench::trainer
