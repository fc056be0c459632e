#include "models/registry.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>
#include <stdexcept>

#include "common/lists.h"
#include "models/densenet.h"
#include "models/lenet.h"
#include "models/mobilenetv2.h"
#include "models/model_options.h"
#include "models/resnet.h"
#include "models/vgg.h"

namespace dtbench::models {

namespace {

using Factory = std::function<ClassifierPtr(const ModelOptions&)>;

struct Entry {
  std::string name;
  Factory make;
};

Factory resNet(int depth) {
  return [depth](const ModelOptions& o) {
    return std::make_shared<ResNetImpl>(resNetConfig(depth), o);
  };
}

Factory denseNet(int depth) {
  return [depth](const ModelOptions& o) {
    return std::make_shared<DenseNetImpl>(denseNetConfig(depth), o);
  };
}

Factory vgg(int depth) {
  return [depth](const ModelOptions& o) { return std::make_shared<VggImpl>(depth, o); };
}

// The zoo, in the order `dtbench models` prints it.
const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries{
      {"resnet18", resNet(18)},
      {"resnet34", resNet(34)},
      {"resnet50", resNet(50)},
      {"resnet101", resNet(101)},
      {"resnet152", resNet(152)},
      {"mobilenetv2", [](const ModelOptions& o) { return std::make_shared<MobileNetV2Impl>(o); }},
      {"densenet121", denseNet(121)},
      {"densenet201", denseNet(201)},
      {"vgg11", vgg(11)},
      {"vgg13", vgg(13)},
      {"vgg16", vgg(16)},
      {"vgg19", vgg(19)},
      {"lenet", [](const ModelOptions& o) { return std::make_shared<LeNetImpl>(o); }},
  };
  return kEntries;
}

std::string toLower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

const std::vector<std::string>& modelNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& entry : entries()) {
      names.push_back(entry.name);
    }
    return names;
  }();
  return kNames;
}

const Entry* findEntry(const std::string& name) {
  const std::string key = toLower(name);
  const auto& all = entries();
  const auto found = std::find_if(all.begin(), all.end(), [&](const Entry& e) { return e.name == key; });
  return found == all.end() ? nullptr : &*found;
}

bool isModelName(const std::string& name) { return findEntry(name) != nullptr; }

ClassifierPtr makeModel(const std::string& name, const ModelOptions& options) {
  const Entry* found = findEntry(name);
  if (found == nullptr) {
    throw std::invalid_argument("unknown model '" + name + "'; valid models: " + common::joinList(modelNames()));
  }
  checkModelOptions(options);
  if (options.imagenetLayout && found->name.rfind("resnet", 0) != 0 && found->name.rfind("vgg", 0) != 0)
    throw std::invalid_argument("model '" + name + "' has no ImageNet layout; the ResNets and VGGs have one");
  return found->make(options);
}

ParameterStats parameterStats(const torch::nn::Module& module) {
  ParameterStats stats;
  for (const auto& parameter : module.parameters()) {
    if (parameter.requires_grad()) {
      stats.parameters += parameter.numel();
      stats.tensors += 1;
    }
  }
  return stats;
}

}  // namespace dtbench::models
