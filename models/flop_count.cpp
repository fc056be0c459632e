#include "models/flop_count.h"

#include <cctype>
#include <memory>
#include <string_view>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/nn/functional/loss.h>
#include <torch/torch.h>

#include "models/registry.h"

namespace dtbench::models {
namespace {

// What an operator is to the counter.
enum class Kind { kConvolution, kTransposedConvolution, kMatmul, kElementwise };

struct OperatorRule {
  const char* name;  // as RecordFunction names it
  Kind kind;
  const char* label;  // FlopCount::forwardMacsByKind's key; elementwise: unused
  int first;          // matmul: the operand whose last dimension is reduced; convolutions: the input
  int second;         // matmul: the other operand; convolutions: the weight
};

// Every operator the zoo's models reach, and those a model's forward commonly uses besides. An
// operator called inside another one of the table is not counted again.
const OperatorRule kRules[] = {
    {"aten::conv1d", Kind::kConvolution, "convolution", 0, 1},
    {"aten::conv2d", Kind::kConvolution, "convolution", 0, 1},
    {"aten::conv3d", Kind::kConvolution, "convolution", 0, 1},
    {"aten::convolution", Kind::kConvolution, "convolution", 0, 1},  // its argument 6 says transposed
    {"aten::_convolution", Kind::kConvolution, "convolution", 0, 1},
    {"aten::conv_transpose1d", Kind::kTransposedConvolution, "convolution", 0, 1},
    {"aten::conv_transpose2d", Kind::kTransposedConvolution, "convolution", 0, 1},
    {"aten::conv_transpose3d", Kind::kTransposedConvolution, "convolution", 0, 1},
    {"aten::linear", Kind::kMatmul, "linear", 0, 1},
    {"aten::addmm", Kind::kMatmul, "linear", 1, 2},
    {"aten::mm", Kind::kMatmul, "linear", 0, 1},
    {"aten::matmul", Kind::kMatmul, "linear", 0, 1},
    {"aten::bmm", Kind::kMatmul, "linear", 0, 1},
    {"aten::baddbmm", Kind::kMatmul, "linear", 1, 2},
    {"aten::batch_norm", Kind::kElementwise, "", 0, 0},
    {"aten::relu", Kind::kElementwise, "", 0, 0},
    {"aten::relu_", Kind::kElementwise, "", 0, 0},
    {"aten::relu6", Kind::kElementwise, "", 0, 0},
    {"aten::hardtanh", Kind::kElementwise, "", 0, 0},
    {"aten::hardtanh_", Kind::kElementwise, "", 0, 0},
    {"aten::add", Kind::kElementwise, "", 0, 0},
    {"aten::add_", Kind::kElementwise, "", 0, 0},
    {"aten::max_pool2d", Kind::kElementwise, "", 0, 0},
    {"aten::avg_pool2d", Kind::kElementwise, "", 0, 0},
    {"aten::adaptive_avg_pool2d", Kind::kElementwise, "", 0, 0},
    {"aten::cross_entropy_loss", Kind::kElementwise, "", 0, 0},  // one per logit: its input's elements
};

const OperatorRule* ruleOf(const char* name) {
  const std::string_view n(name);
  for (const OperatorRule& rule : kRules)
    if (n == rule.name) return &rule;
  return nullptr;
}

struct Operand {
  bool defined = false;
  int64_t elements = 0;
  int64_t lastDimension = 0;
  int64_t firstDimension = 0;
  bool requiresGrad = false;
};

Operand operandOf(c10::ArrayRef<const c10::IValue> inputs, int index) {
  Operand o;
  if (index < 0 || static_cast<size_t>(index) >= inputs.size() || !inputs[index].isTensor()) return o;
  const at::Tensor& t = inputs[index].toTensor();
  if (!t.defined() || t.dim() == 0) return o;
  o.defined = true;
  o.elements = t.numel();
  o.lastDimension = t.size(-1);
  o.firstDimension = t.size(0);
  o.requiresGrad = t.requires_grad();
  return o;
}

// The operator open on this thread, as the start callback saw its inputs.
struct Observed : at::ObserverContext {
  const OperatorRule* rule = nullptr;  // null: inside a counted operator, not counted
  Kind kind = Kind::kElementwise;
  Operand first, second;
};

struct Counter {
  FlopCount count;
  int open = 0;  // operators of the table open on this thread
};
thread_local Counter* tCounter = nullptr;

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn) {
  if (tCounter == nullptr) return nullptr;
  const OperatorRule* rule = ruleOf(fn.name());
  if (rule == nullptr) return nullptr;
  auto observed = std::make_unique<Observed>();
  if (tCounter->open++ > 0) return observed;  // inside another counted operator
  observed->rule = rule;
  observed->kind = rule->kind;
  const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  if (rule->kind == Kind::kConvolution && std::string_view(rule->name).find("convolution") != std::string_view::npos &&
      inputs.size() > 6 && inputs[6].isBool() && inputs[6].toBool())
    observed->kind = Kind::kTransposedConvolution;
  if (rule->kind != Kind::kElementwise) {
    observed->first = operandOf(inputs, rule->first);
    observed->second = operandOf(inputs, rule->second);
  } else {
    observed->first = operandOf(inputs, 0);
  }
  return observed;
}

void onEnd(const at::RecordFunction& fn, at::ObserverContext* context) {
  if (tCounter == nullptr || context == nullptr) return;
  --tCounter->open;
  const auto* observed = static_cast<const Observed*>(context);
  if (observed->rule == nullptr) return;
  const std::vector<c10::IValue>& outputs = fn.outputs();
  int64_t outputElements = 0;
  if (!outputs.empty() && outputs[0].isTensor() && outputs[0].toTensor().defined())
    outputElements = outputs[0].toTensor().numel();
  FlopCount& count = tCounter->count;
  const Operand& a = observed->first;
  const Operand& b = observed->second;
  int64_t macs = 0;
  switch (observed->kind) {
    case Kind::kElementwise:
      // The loss: one per logit (its input); the others: one per output element.
      count.elementwiseOps += std::string_view(observed->rule->name) == "aten::cross_entropy_loss" ? a.elements
                                                                                                  : outputElements;
      return;
    case Kind::kConvolution:  // output x (input channels / groups) x kernel area: the weight per output channel
      if (!b.defined || b.firstDimension == 0) return;
      macs = outputElements * (b.elements / b.firstDimension);
      break;
    case Kind::kTransposedConvolution:  // input x (output channels / groups) x kernel area
      if (!b.defined || b.firstDimension == 0) return;
      macs = a.elements * (b.elements / b.firstDimension);
      break;
    case Kind::kMatmul:  // output x the reduced dimension
      if (!a.defined) return;
      macs = outputElements * a.lastDimension;
      break;
  }
  count.forwardMacs += macs;
  count.forwardMacsByKind[observed->rule->label] += macs;
  const int64_t backward = macs * ((a.requiresGrad ? 1 : 0) + (b.requiresGrad ? 1 : 0));
  count.backwardMacs += backward;
  count.backwardMacsByKind[observed->rule->label] += backward;
}

// Installs the observer on this thread for its lifetime.
class CountingScope {
 public:
  explicit CountingScope(Counter& counter) {
    if (tCounter != nullptr) throw std::logic_error("countFlops: already counting on this thread");
    tCounter = &counter;
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(onStart, onEnd).needsInputs(true).needsOutputs(true).scopes(
            {at::RecordScope::FUNCTION}));
  }
  ~CountingScope() {
    at::removeCallback(handle_);
    tCounter = nullptr;
  }
  CountingScope(const CountingScope&) = delete;
  CountingScope& operator=(const CountingScope&) = delete;

 private:
  at::CallbackHandle handle_;
};

}  // namespace

int64_t FlopCount::trainingMacs(const std::string& kind) const {
  int64_t total = 0;
  if (const auto it = forwardMacsByKind.find(kind); it != forwardMacsByKind.end()) total += it->second;
  if (const auto it = backwardMacsByKind.find(kind); it != backwardMacsByKind.end()) total += it->second;
  return total;
}

FlopCount countFlops(Classifier& model, int64_t channels, int64_t imageSize, int64_t classes) {
  torch::nn::Module& module = model.module();
  const bool wasTraining = module.is_training();
  module.eval();  // batch norm over one image; the counts do not depend on the mode
  const torch::Tensor image = torch::zeros({1, channels, imageSize, imageSize});
  const torch::Tensor target = torch::zeros({1}, torch::kLong);
  Counter counter;
  try {
    const torch::AutoGradMode gradients(true);
    const CountingScope scope(counter);
    const torch::Tensor logits = model.forward(image);
    if (logits.dim() != 2 || logits.size(1) != classes)
      throw std::invalid_argument("the model gives logits of shape " + c10::str(logits.sizes()) + ", not [1, " +
                                  std::to_string(classes) + "]");
    (void)torch::nn::functional::cross_entropy(logits, target);
  } catch (const c10::Error& e) {
    module.train(wasTraining);
    throw std::invalid_argument(e.what_without_backtrace());
  } catch (...) {
    module.train(wasTraining);
    throw;
  }
  module.train(wasTraining);
  return counter.count;
}

ModelOptions optionsForImageSize(const std::string& name, int64_t channels, int64_t imageSize, int64_t classes) {
  ModelOptions options;
  options.inputChannels = channels;
  options.numClasses = classes;
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool hasImagenetLayout = lower.rfind("resnet", 0) == 0 || lower.rfind("vgg", 0) == 0;
  options.imagenetLayout = hasImagenetLayout && imageSize >= 64;
  return options;
}

FlopCount countModelFlops(const std::string& name, int64_t channels, int64_t imageSize, int64_t classes) {
  const ClassifierPtr model = makeModel(name, optionsForImageSize(name, channels, imageSize, classes));
  return countFlops(*model, channels, imageSize, classes);
}

}  // namespace dtbench::models
