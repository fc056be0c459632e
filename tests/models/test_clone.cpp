// clone() (models::cloneClassifier): what data_parallel relies on. A clone is an independent deep
// copy: the same concrete type, the same parameters and buffers in new storage, the same outputs,
// and changes to it do not reach the original.

#include "catch_torch.h"
#include "models/classifier.h"

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <typeinfo>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "models/registry.h"

namespace models = dtbench::models;

namespace {

models::ClassifierPtr cloneOf(const models::ClassifierPtr& model) {
  auto copy = models::cloneClassifier(*model);
  REQUIRE(copy != nullptr);
  CHECK(typeid(copy->module()) == typeid(model->module()));  // the model's own type, as data_parallel needs
  return copy;
}

// Same names, shapes and values, but never the same storage.
void checkDeepCopy(const torch::nn::Module& original, const torch::nn::Module& copy) {
  const auto originalParameters = original.named_parameters();
  const auto copyParameters = copy.named_parameters();
  REQUIRE(copyParameters.size() == originalParameters.size());
  for (size_t i = 0; i < originalParameters.size(); ++i) {
    INFO("parameter " << originalParameters[i].key());
    CHECK(copyParameters[i].key() == originalParameters[i].key());
    CHECK(torch::equal(copyParameters[i].value(), originalParameters[i].value()));
    CHECK(copyParameters[i].value().data_ptr() != originalParameters[i].value().data_ptr());
    CHECK(copyParameters[i].value().requires_grad());
  }
  const auto originalBuffers = original.named_buffers();
  const auto copyBuffers = copy.named_buffers();
  REQUIRE(copyBuffers.size() == originalBuffers.size());
  for (size_t i = 0; i < originalBuffers.size(); ++i) {
    INFO("buffer " << originalBuffers[i].key());
    CHECK(copyBuffers[i].key() == originalBuffers[i].key());
    CHECK(torch::equal(copyBuffers[i].value(), originalBuffers[i].value()));
    CHECK(copyBuffers[i].value().data_ptr() != originalBuffers[i].value().data_ptr());
  }
}

}  // namespace

TEST_CASE("every model's clone is a deep copy of its own type", "[models][clone]") {
  for (const auto& name : models::modelNames()) {
    INFO("model " << name);
    const auto model = models::makeModel(name);
    const auto copy = cloneOf(model);
    checkDeepCopy(model->module(), copy->module());
    CHECK(copy->module().modules().size() == model->module().modules().size());
  }
}

TEST_CASE("a clone computes what the original computes and changes alone", "[models][clone]") {
  torch::manual_seed(3);
  for (const std::string name : {"resnet18", "mobilenetv2", "densenet121", "vgg11", "lenet"}) {
    INFO("model " << name);
    const auto model = models::makeModel(name);
    {
      // Non-default running statistics, so that the copy of the buffers matters in eval mode.
      torch::NoGradGuard noGrad;
      model->module().train();
      model->forward(torch::randn({2, 3, 32, 32}));
    }
    model->module().eval();
    const auto copy = cloneOf(model);
    CHECK_FALSE(copy->module().is_training());
    checkDeepCopy(model->module(), copy->module());

    torch::NoGradGuard noGrad;
    const auto x = torch::randn({1, 3, 32, 32});
    const auto expected = model->forward(x);
    CHECK(torch::equal(copy->forward(x), expected));

    const auto originalFirst = model->module().parameters().front().clone();
    copy->module().parameters().front().add_(1.0);
    CHECK(torch::equal(model->module().parameters().front(), originalFirst));
    CHECK_FALSE(torch::equal(copy->module().parameters().front(), originalFirst));
    CHECK(torch::equal(model->forward(x), expected));
    CHECK_FALSE(torch::equal(copy->forward(x), expected));

    // Training the copy's batch norms moves its running statistics, not the original's.
    std::vector<torch::Tensor> before;
    for (const auto& buffer : model->module().buffers()) {
      before.push_back(buffer.clone());
    }
    copy->module().train();
    copy->forward(x);
    const auto modelBuffers = model->module().buffers();
    const auto copyBuffers = copy->module().buffers();
    bool copyMoved = before.empty();
    for (size_t i = 0; i < before.size(); ++i) {
      CHECK(torch::equal(modelBuffers[i], before[i]));
      copyMoved = copyMoved || !torch::equal(copyBuffers[i], before[i]);
    }
    CHECK(copyMoved);
    CHECK(torch::equal(model->forward(x), expected));
  }
}

TEST_CASE("a clone of a clone is still exact", "[models][clone]") {
  const auto model = models::makeModel("resnet18");
  const auto copy = cloneOf(cloneOf(model));
  checkDeepCopy(model->module(), copy->module());
  model->module().eval();
  copy->module().eval();
  torch::NoGradGuard noGrad;
  const auto x = torch::randn({1, 3, 32, 32});
  CHECK(torch::equal(copy->forward(x), model->forward(x)));
}
