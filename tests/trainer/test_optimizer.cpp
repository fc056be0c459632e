// The optimizers of trainer/optimizer.h: each equals LibTorch's own (torch::optim::SGD, Adam,
// RMSprop, which update one parameter at a time) within fp32 rounding over several steps, the first
// step's momentum included, and resumes from an optimizer state that LibTorch's own class saved
// before the multi-tensor optimizers existed (tests/trainer/fixtures/).

#include "catch_torch.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include "optimizer_fixture.h"
#include "trainer/checkpoint_files.h"
#include "trainer/optimizer.h"

using dtbench::trainer::OptimizerKind;
using dtbench::trainer::makeOptimizer;
namespace t = dtbench::testing;

namespace {

std::string readBytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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
