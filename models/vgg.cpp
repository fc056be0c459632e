#include "models/vgg.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/modules/linear.h>

#include "models/model_options.h"

namespace dtbench::models {

namespace {

constexpr int64_t kMaxPool = 0;  // the configuration's 'M'
constexpr int64_t kFeatures = 512;

// The layer configuration of VGG-`depth`: output channels of each conv3x3, kMaxPool for 'M'.
std::vector<int64_t> vggConfig(int depth) {
  constexpr int64_t M = kMaxPool;
  switch (depth) {
    case 11: return {64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 13: return {64, 64, M, 128, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 16:
      return {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
    case 19:
      return {64,  64,  M,   128, 128, M,   256, 256, 256, 256, M,
              512, 512, 512, 512, M,   512, 512, 512, 512, M};
    default:
      throw std::invalid_argument("no VGG of depth " + std::to_string(depth) +
                                  "; depths are 11, 13, 16, 19");
  }
}

}  // namespace

VggImpl::VggImpl(int depth, ModelOptions options) : depth_(depth), options_(options) {
  checkModelOptions(options_);
  reset();
}

void VggImpl::reset() {
  torch::nn::Sequential features;
  int64_t inChannels = options_.inputChannels;
  for (const int64_t entry : vggConfig(depth_)) {
    if (entry == kMaxPool) {
      features->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
    } else {
      features->push_back(
          torch::nn::Conv2d(torch::nn::Conv2dOptions(inChannels, entry, 3).padding(1)));
      features->push_back(torch::nn::BatchNorm2d(entry));
      features->push_back(torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));
      inChannels = entry;
    }
  }
  features->push_back(torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(1).stride(1)));
  features_ = register_module("features", features);
  if (!options_.imagenetLayout) {
    classifier_ = register_module("classifier", torch::nn::Linear(kFeatures, options_.numClasses));
    return;
  }
  constexpr int64_t kHidden = 4096, kPooled = kFeatures * 7 * 7;
  torch::nn::Sequential head;
  head->push_back(torch::nn::Linear(kPooled, kHidden));
  head->push_back(torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));
  head->push_back(torch::nn::Dropout());
  head->push_back(torch::nn::Linear(kHidden, kHidden));
  head->push_back(torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));
  head->push_back(torch::nn::Dropout());
  head->push_back(torch::nn::Linear(kHidden, options_.numClasses));
  imagenetClassifier_ = register_module("classifier", head);
}

torch::Tensor VggImpl::forward(torch::Tensor x) {
  auto out = features_->forward(x);
  if (options_.imagenetLayout) {
    out = torch::adaptive_avg_pool2d(out, {7, 7});
    return imagenetClassifier_->forward(out.flatten(1));
  }
  out = out.view({out.size(0), -1});
  return classifier_(out);
}

}  // namespace dtbench::models
