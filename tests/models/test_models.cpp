// The registry and the shape of every model: parameter counts against docs/reference.md, outputs for
// 3- and 1-channel input, gradients reaching every parameter, and the errors of makeModel.

#include "catch_torch.h"
#include "models/classifier.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model_families.h"
#include "models/registry.h"

namespace models = dtbench::models;

namespace {

struct ReferenceCount {
  std::string name;
  int64_t parameters;
  int64_t tensors;
};

// docs/reference.md, "Model parameter counts" (trainable, 10 classes, 3x32x32 input).
const std::vector<ReferenceCount> kReferenceCounts{
    {"resnet18", 11173962, 62},     {"resnet34", 21282122, 110},
    {"resnet50", 23520842, 161},    {"resnet101", 42512970, 314},
    {"resnet152", 58156618, 467},   {"mobilenetv2", 2296922, 173},
    {"densenet121", 6956298, 362},  {"densenet201", 18104330, 602},
    {"vgg11", 9231114, 34},         {"vgg13", 9416010, 42},
    {"vgg16", 14728266, 54},        {"vgg19", 20040522, 66},
    {"lenet", 62006, 10},
};

constexpr int64_t kBatch = 2;

std::string thrownMessage(const std::string& name, const models::ModelOptions& options = {}) {
  try {
    models::makeModel(name, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("modelNames lists the zoo in the documented order", "[models][registry]") {
  std::vector<std::string> expected;
  for (const auto& reference : kReferenceCounts) {
    expected.push_back(reference.name);
  }
  CHECK(models::modelNames() == expected);
}

TEST_CASE("every model has docs/reference.md's parameter and tensor counts", "[models][counts]") {
  for (const auto& reference : kReferenceCounts) {
    INFO("model " << reference.name);
    const auto model = models::makeModel(reference.name);
    const auto stats = models::parameterStats(model->module());
    CHECK(stats.parameters == reference.parameters);
    CHECK(stats.tensors == reference.tensors);
    CHECK(stats.fp32Megabytes() == Approx(reference.parameters * 4.0 / 1e6));
  }
}

TEST_CASE("parameterStats counts only trainable parameters", "[models][counts]") {
  const auto model = models::makeModel("lenet");
  const auto before = models::parameterStats(model->module());
  const auto first = model->module().parameters().front();
  first.set_requires_grad(false);
  const auto after = models::parameterStats(model->module());
  CHECK(after.tensors == before.tensors - 1);
  CHECK(after.parameters == before.parameters - first.numel());
}

TEST_CASE("every model maps a 3x32x32 batch to 10 logits per image", "[models][forward]") {
  torch::manual_seed(1);
  torch::NoGradGuard noGrad;
  for (const auto& name : models::modelNames()) {
    INFO("model " << name);
    // The three deepest models take seconds per image on one core: one image is enough there.
    const bool deep = name == "resnet101" || name == "resnet152" || name == "densenet201";
    const int64_t batch = deep ? 1 : kBatch;
    const auto model = models::makeModel(name);
    model->module().train();
    const auto logits = model->forward(torch::randn({batch, 3, 32, 32}));
    CHECK(logits.sizes() == torch::IntArrayRef({batch, 10}));
    CHECK(torch::isfinite(logits).all().item<bool>());
  }
}

TEST_CASE("every parameter receives a gradient", "[models][forward]") {
  torch::manual_seed(4);
  for (const auto& name : oneModelPerFamily()) {
    INFO("model " << name);
    const auto model = models::makeModel(name);
    model->module().train();
    model->forward(torch::randn({kBatch, 3, 32, 32})).pow(2).mean().backward();
    for (const auto& parameter : model->module().named_parameters()) {
      INFO("parameter " << parameter.key());
      CHECK(parameter.value().grad().defined());
    }
  }
}

TEST_CASE("1-channel models change only the first convolution", "[models][forward]") {
  torch::manual_seed(2);
  torch::NoGradGuard noGrad;
  for (const auto& name : models::modelNames()) {
    INFO("model " << name);
    const auto rgb = models::makeModel(name);
    const auto gray = models::makeModel(name, {1, 10});
    const auto rgbParameters = rgb->module().named_parameters();
    const auto grayParameters = gray->module().named_parameters();
    REQUIRE(rgbParameters.size() == grayParameters.size());

    const auto& firstRgb = rgbParameters[0].value();
    const auto& firstGray = grayParameters[0].value();
    REQUIRE(firstRgb.dim() == 4);
    CHECK(firstRgb.size(1) == 3);
    CHECK(firstGray.size(1) == 1);
    CHECK(firstGray.size(0) == firstRgb.size(0));
    CHECK(firstGray.size(2) == firstRgb.size(2));
    CHECK(firstGray.size(3) == firstRgb.size(3));
    for (size_t i = 1; i < rgbParameters.size(); ++i) {
      INFO("parameter " << rgbParameters[i].key());
      CHECK(grayParameters[i].key() == rgbParameters[i].key());
      CHECK(grayParameters[i].value().sizes() == rgbParameters[i].value().sizes());
    }
    const int64_t firstConvChange = firstRgb.numel() - firstGray.numel();
    CHECK(firstConvChange == 2 * firstRgb.size(0) * firstRgb.size(2) * firstRgb.size(3));
    CHECK(models::parameterStats(rgb->module()).parameters - models::parameterStats(gray->module()).parameters ==
          firstConvChange);
  }
  for (const auto& name : oneModelPerFamily()) {
    INFO("model " << name);
    const auto gray = models::makeModel(name, {1, 10});
    gray->module().eval();
    CHECK(gray->forward(torch::randn({1, 1, 32, 32})).sizes() == torch::IntArrayRef({1, 10}));
  }
}

TEST_CASE("numClasses sets the width of the last layer", "[models][forward]") {
  torch::NoGradGuard noGrad;
  for (const auto& name : {"resnet50", "mobilenetv2", "densenet121", "vgg16", "lenet"}) {
    INFO("model " << name);
    const auto model = models::makeModel(name, {3, 100});
    model->module().eval();
    CHECK(model->forward(torch::randn({1, 3, 32, 32})).sizes() ==
          torch::IntArrayRef({1, 100}));
    CHECK(model->module().parameters().back().sizes() == torch::IntArrayRef({100}));
  }
}

TEST_CASE("the ImageNet layouts have torchvision's parameter counts and take 224x224 images", "[models][forward]") {
  torch::NoGradGuard noGrad;
  models::ModelOptions imagenet{3, 1000, true};
  // torchvision.models.resnet18() and resnet50(): 11,689,512 and 25,557,032 parameters.
  CHECK(models::parameterStats(models::makeModel("resnet18", imagenet)->module()).parameters == 11689512);
  const auto resnet50 = models::makeModel("resnet50", imagenet);
  CHECK(models::parameterStats(resnet50->module()).parameters == 25557032);
  resnet50->module().eval();
  CHECK(resnet50->forward(torch::randn({1, 3, 224, 224})).sizes() == torch::IntArrayRef({1, 1000}));
  CHECK(resnet50->forward(torch::randn({1, 3, 64, 64})).sizes() == torch::IntArrayRef({1, 1000}));
  // torchvision's vgg16_bn: 138,365,992 (vgg16 without the batch norms: 138,357,544).
  const auto vgg16 = models::makeModel("vgg16", imagenet);
  CHECK(models::parameterStats(vgg16->module()).parameters == 138365992);
  vgg16->module().eval();
  CHECK(vgg16->forward(torch::randn({1, 3, 224, 224})).sizes() == torch::IntArrayRef({1, 1000}));
  CHECK_THROWS_WITH(models::makeModel("mobilenetv2", imagenet), Catch::Contains("the ResNets and VGGs have one"));
}

TEST_CASE("makeModel ignores case", "[models][registry]") {
  const auto lower = models::makeModel("resnet18");
  const auto upper = models::makeModel("ResNet18");
  const auto shouting = models::makeModel("MOBILENETV2");
  CHECK(models::parameterStats(upper->module()).parameters ==
        models::parameterStats(lower->module()).parameters);
  CHECK(models::parameterStats(shouting->module()).parameters == 2296922);
  CHECK(models::parameterStats(models::makeModel("DenseNet121")->module()).tensors == 362);
  CHECK(models::parameterStats(models::makeModel("LeNet")->module()).parameters == 62006);
}

TEST_CASE("an unknown model name lists every valid name", "[models][registry]") {
  CHECK_THROWS_AS(models::makeModel("resnet19"), std::invalid_argument);
  const std::string message = thrownMessage("resnet19");
  CHECK_THAT(message, Catch::Contains("unknown model 'resnet19'"));
  for (const auto& name : models::modelNames()) {
    CHECK_THAT(message, Catch::Contains(name));
  }
  CHECK_THAT(thrownMessage(""), Catch::Contains("valid models: resnet18, resnet34"));
  CHECK_THAT(thrownMessage(" resnet18"), Catch::Contains("lenet"));
}

TEST_CASE("impossible options are rejected with the bad value", "[models][registry]") {
  CHECK_THROWS_AS(models::makeModel("lenet", {0, 10}), std::invalid_argument);
  CHECK_THAT(thrownMessage("lenet", {0, 10}), Catch::Contains("inputChannels") &&
                                                  Catch::Contains("got 0"));
  CHECK_THAT(thrownMessage("resnet18", {-2, 10}), Catch::Contains("got -2"));
  CHECK_THROWS_AS(models::makeModel("vgg11", {3, 1}), std::invalid_argument);
  CHECK_THAT(thrownMessage("vgg11", {3, 1}), Catch::Contains("numClasses") &&
                                                 Catch::Contains("got 1"));
  CHECK_NOTHROW(models::makeModel("lenet", {1, 2}));
}
