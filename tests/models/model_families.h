#pragma once
// One model of each architecture class of the zoo. The deeper variants (resnet34/101/152,
// densenet201, vgg13/16/19) are the same classes with more of the same blocks, so tests that are
// expensive per model (backward passes, clones, 1-channel forwards) run on these six.

#include <string>
#include <vector>

inline const std::vector<std::string>& oneModelPerFamily() {
  static const std::vector<std::string> kModels{"resnet18", "resnet50",    "mobilenetv2",
                                                "densenet121", "vgg11", "lenet"};
  return kModels;
}
