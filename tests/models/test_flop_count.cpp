// models/flop_count.h: dtbench's FLOP counts against PyTorch's own counter (FlopCounterMode, on the
// same torch: expected/flops.json, written by generate_flops.py) for every model of the zoo at 32x32
// and ResNet-50 / VGG-16 at 224x224 (torchvision's), and against hand-derived counts where
// FlopCounterMode is wrong (the backward of a grouped convolution).

#include "catch_torch.h"

#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "dtbench/build_config.h"
#include "models/classifier_module.h"
#include "models/flop_count.h"
#include "models/registry.h"

namespace models = dtbench::models;

namespace {

nlohmann::json readExpected() {
  std::ifstream in(std::string(DTBENCH_SOURCE_DIR) + "/tests/models/expected/flops.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// A 1x1 convolution from the image's 3 channels to 32 (its input needs no gradient), a 32-channel
// depthwise 3x3 convolution on 16x16 (its input does), global average pooling and a linear layer.
class DepthwiseNet : public models::ClassifierModule<DepthwiseNet> {
 public:
  DepthwiseNet() { reset(); }
  void reset() override {
    pointwise_ = register_module("pointwise", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 32, 1).bias(false)));
    depthwise_ = register_module(
        "depthwise", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 32, 3).padding(1).groups(32).bias(false)));
    linear_ = register_module("linear", torch::nn::Linear(32, 10));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = depthwise_(pointwise_(x));
    return linear_(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }

 private:
  torch::nn::Conv2d pointwise_{nullptr}, depthwise_{nullptr};
  torch::nn::Linear linear_{nullptr};
};

}  // namespace

TEST_CASE("the forward FLOPs of every model equal PyTorch's counter, the training step's where it counts right",
          "[flop_count]") {
  const nlohmann::json expected = readExpected();
  const nlohmann::json& all = expected.at("models");
  // Every model of the zoo has its reference, plus the two at 224x224.
  CHECK(all.size() == models::modelNames().size() + 2);
  for (const auto& [key, reference] : all.items()) {
    const std::string name = key.substr(0, key.find('@'));
    const int64_t size = reference.at("image_size").get<int64_t>();
    const int64_t classes = reference.at("classes").get<int64_t>();
    INFO(key << " at " << size << "x" << size << ", " << classes << " classes");
    const models::FlopCount count = models::countModelFlops(name, 3, size, classes);
    CHECK(count.forwardFlops() == reference.at("forward_flops").get<double>());
    if (!reference.at("grouped").get<bool>()) {
      CHECK(count.trainingFlops() == reference.at("training_flops").get<double>());
    } else {
      // FlopCounterMode counts a grouped convolution's backward as if it were ungrouped: above
      // dtbench's, which is 3x the forward less the first layer's input gradient.
      CHECK(count.trainingFlops() < reference.at("training_flops").get<double>());
    }
    CHECK(count.backwardMacs <= 2 * count.forwardMacs);
    CHECK(count.backwardMacs > count.forwardMacs);
    CHECK(count.elementwiseOps > 0);
  }
}

TEST_CASE("the published cross-checks: ResNet-18 at 32x32 about 0.56 GMAC, ResNet-50 at 224x224 about 4.1",
          "[flop_count]") {
  CHECK(models::countModelFlops("resnet18").forwardMacs == 555422720);
  const models::FlopCount resnet50 = models::countModelFlops("resnet50", 3, 224, 1000);
  CHECK(resnet50.forwardMacs > 4.05e9);
  CHECK(resnet50.forwardMacs < 4.15e9);
}

TEST_CASE("a depthwise convolution's backward is twice its forward, counted by hand", "[flop_count]") {
  DepthwiseNet net;
  const models::FlopCount count = models::countFlops(net, 3, 16, 10);
  const int64_t pointwise = 16 * 16 * 32 * 3;  // per output element: 3 input channels x 1x1
  const int64_t depthwise = 16 * 16 * 32 * 9;  // per output element: 1 channel of its group x 3x3
  const int64_t linear = 10 * 32;
  CHECK(count.forwardMacs == pointwise + depthwise + linear);
  CHECK(count.forwardMacsByKind.at("convolution") == pointwise + depthwise);
  CHECK(count.forwardMacsByKind.at("linear") == linear);
  // The image needs no gradient: the first convolution's backward is its weight gradient alone.
  CHECK(count.backwardMacs == pointwise + 2 * depthwise + 2 * linear);
  // The pooled 32 values, and the loss over 10 logits.
  CHECK(count.elementwiseOps == 32 + 10);

  // FlopCounterMode on the same depthwise convolution alone (expected/flops.json): its forward is
  // dtbench's, its forward + backward 34x that instead of 3x.
  const nlohmann::json reference = readExpected().at("depthwise");
  CHECK(reference.at("forward_flops").get<double>() == 2.0 * depthwise);
  CHECK(reference.at("training_flops").get<double>() == 34 * 2.0 * depthwise);
}

TEST_CASE("counting leaves the model as it was and refuses an image it does not take", "[flop_count]") {
  const models::ClassifierPtr model = models::makeModel("resnet18");
  model->module().train();
  const models::FlopCount first = models::countFlops(*model, 3, 32, 10);
  CHECK(model->module().is_training());
  const models::FlopCount second = models::countFlops(*model, 3, 32, 10);
  CHECK(first.forwardMacs == second.forwardMacs);
  CHECK(first.backwardMacs == second.backwardMacs);
  // A 64x64 image in the CIFAR layout of a VGG: its classifier takes 512 features, not 2048.
  const models::ClassifierPtr vgg = models::makeModel("vgg11");
  CHECK_THROWS_AS(models::countFlops(*vgg, 3, 64, 10), std::invalid_argument);
  // Ten classes expected, a thousand given.
  CHECK_THROWS_WITH(models::countFlops(*model, 3, 32, 1000), Catch::Contains("not [1, 1000]"));
}

TEST_CASE("the zoo's layout for an image size", "[flop_count]") {
  CHECK(models::optionsForImageSize("ResNet50", 3, 224, 1000).imagenetLayout);
  CHECK(models::optionsForImageSize("vgg16", 3, 64, 10).imagenetLayout);
  CHECK_FALSE(models::optionsForImageSize("resnet18", 3, 32, 10).imagenetLayout);
  CHECK_FALSE(models::optionsForImageSize("mobilenetv2", 3, 224, 10).imagenetLayout);
  CHECK(models::optionsForImageSize("lenet", 1, 32, 7).inputChannels == 1);
  CHECK(models::optionsForImageSize("lenet", 1, 32, 7).numClasses == 7);
}
