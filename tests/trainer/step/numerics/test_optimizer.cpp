// The optimizers of trainer/step/numerics/optimizer.h: each equals LibTorch's own (torch::optim::SGD, Adam,
// RMSprop, which update one parameter at a time) within fp32 rounding over several steps, the first
// step's momentum included, and resumes from an optimizer state that LibTorch's own class saved
// before the multi-tensor optimizers existed (tests/trainer/fixtures/).

#include "catch_torch.h"

#include <cstdint>
#include <fstream>
#include <typeinfo>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include "optimizer_equivalence.h"
#include "optimizer_fixture.h"
#include "trainer/checkpoint/training_state.h"
#include "trainer/step/numerics/multi_tensor_optimizers.h"
#include "trainer/step/numerics/optimizer.h"

using dtbench::trainer::OptimizerKind;
using dtbench::trainer::makeOptimizer;
namespace t = dtbench::testing;

namespace {

std::string readBytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

// Writes the fixtures (run by hand, with the tag: tests_trainer "[.write_fixtures]").
TEST_CASE("write the optimizer-state fixtures", "[.write_fixtures]") {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam, OptimizerKind::kRmsprop}) {
    torch::manual_seed(1);
    torch::nn::Sequential model = t::fixtureModel();
    const auto optimizer = makeOptimizer(t::fixtureConfig(kind), model->parameters());
    for (int64_t step = 1; step <= t::kFixtureSteps; ++step) {
      t::fixtureGradients(model, step);
      optimizer->step();
    }
    std::ofstream out(t::fixtureFile(kind), std::ios::binary | std::ios::trunc);
    out << dtbench::trainer::serializeTrainingState(*model, *optimizer);
  }
}

namespace {

using dtbench::trainer::MultiTensorAdam;
using dtbench::trainer::MultiTensorRMSprop;
using dtbench::trainer::MultiTensorSGD;
using torch::optim::OptimizerParamState;

std::vector<torch::Tensor> defined(std::vector<torch::Tensor> tensors) {
  std::vector<torch::Tensor> out;
  for (auto& t : tensors)
    if (t.defined()) out.push_back(t);
  return out;
}

std::vector<torch::Tensor> sgdState(const OptimizerParamState& s) {
  return defined({static_cast<const torch::optim::SGDParamState&>(s).momentum_buffer()});
}
std::vector<torch::Tensor> adamState(const OptimizerParamState& s) {
  const auto& a = static_cast<const torch::optim::AdamParamState&>(s);
  return defined({a.exp_avg(), a.exp_avg_sq(), torch::tensor(static_cast<double>(a.step()))});
}
std::vector<torch::Tensor> rmspropState(const OptimizerParamState& s) {
  const auto& r = static_cast<const torch::optim::RMSpropParamState&>(s);
  return defined({r.square_avg(), r.momentum_buffer(), r.grad_avg(), torch::tensor(static_cast<double>(r.step()))});
}

template <class Reference, class Tested, class Options>
void checkPair(const Options& options, const dtbench::testing::StateTensors& state) {
  t::checkSameAsLibTorch([&](std::vector<torch::Tensor> p) { return std::make_unique<Reference>(p, options); },
                         [&](std::vector<torch::Tensor> p) { return std::make_unique<Tested>(p, options); }, state,
                         torch::kCPU);
}

// The fixture's state loaded into `tested` and into LibTorch's class, then both step on.
template <class Reference, class Options>
void checkResumesFromFixture(OptimizerKind kind, const dtbench::testing::StateTensors& state) {
  const std::string bytes = readBytes(t::fixtureFile(kind));
  torch::nn::Sequential referenceModel = t::fixtureModel();
  torch::nn::Sequential testedModel = t::fixtureModel();
  const auto config = t::fixtureConfig(kind);
  const auto tested = makeOptimizer(config, testedModel->parameters());
  // The same options as makeOptimizer's, in LibTorch's own class, which wrote the fixture.
  auto reference = makeOptimizer(config, referenceModel->parameters());
  auto plain = std::make_unique<Reference>(referenceModel->parameters(),
                                           static_cast<const Options&>(reference->defaults()));
  REQUIRE(dynamic_cast<Reference*>(tested.get()) != nullptr);
  REQUIRE(typeid(*tested) != typeid(Reference));
  dtbench::trainer::deserializeTrainingState(bytes, *referenceModel, *plain, "the fixture");
  dtbench::trainer::deserializeTrainingState(bytes, *testedModel, *tested, "the fixture");
  REQUIRE(tested->state().size() == testedModel->parameters().size());  // every parameter's state came back
  t::checkSameState(referenceModel, *plain, testedModel, *tested, state, "resumed");
  for (int64_t step = t::kFixtureSteps + 1; step <= t::kFixtureSteps + 3; ++step) {
    t::fixtureGradients(referenceModel, step);
    t::fixtureGradients(testedModel, step);
    plain->step();
    tested->step();
    t::checkSameState(referenceModel, *plain, testedModel, *tested, state, "step " + std::to_string(step));
  }
  // And back: what the multi-tensor optimizer saves, LibTorch's class loads.
  torch::nn::Sequential backModel = t::fixtureModel();
  auto back = std::make_unique<Reference>(backModel->parameters(),
                                          static_cast<const Options&>(reference->defaults()));
  dtbench::trainer::deserializeTrainingState(dtbench::trainer::serializeTrainingState(*testedModel, *tested), *backModel,
                                             *back, "the saved state");
  t::checkSameState(backModel, *back, testedModel, *tested, state, "saved and loaded back");
}

}  // namespace

TEST_CASE("multi-tensor SGD equals LibTorch's SGD step by step", "[optimizer]") {
  using torch::optim::SGDOptions;
  SECTION("plain") { checkPair<torch::optim::SGD, MultiTensorSGD>(SGDOptions(0.1), sgdState); }
  SECTION("momentum and weight decay, the first step's buffer included") {
    checkPair<torch::optim::SGD, MultiTensorSGD>(SGDOptions(0.1).momentum(0.9).weight_decay(5e-4), sgdState);
  }
  SECTION("dampening") {
    checkPair<torch::optim::SGD, MultiTensorSGD>(SGDOptions(0.1).momentum(0.9).dampening(0.3), sgdState);
  }
  SECTION("nesterov") {
    checkPair<torch::optim::SGD, MultiTensorSGD>(SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(1e-2),
                                                 sgdState);
  }
}

TEST_CASE("multi-tensor Adam equals LibTorch's Adam step by step", "[optimizer]") {
  using torch::optim::AdamOptions;
  SECTION("defaults") { checkPair<torch::optim::Adam, MultiTensorAdam>(AdamOptions(1e-2), adamState); }
  SECTION("weight decay and betas") {
    checkPair<torch::optim::Adam, MultiTensorAdam>(
        AdamOptions(1e-2).weight_decay(1e-2).betas(std::make_tuple(0.8, 0.95)).eps(1e-6), adamState);
  }
  SECTION("amsgrad (LibTorch's own step)") {
    checkPair<torch::optim::Adam, MultiTensorAdam>(AdamOptions(1e-2).amsgrad(true), adamState);
  }
}

TEST_CASE("multi-tensor RMSprop equals LibTorch's RMSprop step by step", "[optimizer]") {
  using torch::optim::RMSpropOptions;
  SECTION("plain") { checkPair<torch::optim::RMSprop, MultiTensorRMSprop>(RMSpropOptions(1e-2), rmspropState); }
  SECTION("momentum and weight decay") {
    checkPair<torch::optim::RMSprop, MultiTensorRMSprop>(RMSpropOptions(1e-2).momentum(0.9).weight_decay(1e-2),
                                                         rmspropState);
  }
  SECTION("centered") {
    checkPair<torch::optim::RMSprop, MultiTensorRMSprop>(RMSpropOptions(1e-2).momentum(0.5).centered(true),
                                                         rmspropState);
  }
}

TEST_CASE("a parameter without a gradient is left alone and gets no state", "[optimizer]") {
  torch::manual_seed(3);
  torch::nn::Sequential model = t::fixtureModel();
  MultiTensorSGD sgd(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  t::fixtureGradients(model, 1);
  const torch::Tensor frozen = model->parameters()[0];
  frozen.mutable_grad() = torch::Tensor();
  const torch::Tensor before = frozen.detach().clone();
  sgd.step();
  CHECK(torch::equal(before, frozen.detach()));
  CHECK(sgd.state().count(frozen.unsafeGetTensorImpl()) == 0);
  CHECK(sgd.state().size() == model->parameters().size() - 1);
}

TEST_CASE("an optimizer state saved by LibTorch's SGD resumes in the multi-tensor SGD", "[optimizer][checkpoint]") {
  checkResumesFromFixture<torch::optim::SGD, torch::optim::SGDOptions>(OptimizerKind::kSgd, sgdState);
}

TEST_CASE("an optimizer state saved by LibTorch's Adam resumes in the multi-tensor Adam", "[optimizer][checkpoint]") {
  checkResumesFromFixture<torch::optim::Adam, torch::optim::AdamOptions>(OptimizerKind::kAdam, adamState);
}

TEST_CASE("an optimizer state saved by LibTorch's RMSprop resumes in the multi-tensor RMSprop", "[optimizer][checkpoint]") {
  checkResumesFromFixture<torch::optim::RMSprop, torch::optim::RMSpropOptions>(OptimizerKind::kRmsprop, rmspropState);
}
