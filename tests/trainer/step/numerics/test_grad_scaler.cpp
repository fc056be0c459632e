// GradScaler (--amp fp16's loss scaling) on hand-worked cases: an overflow skips the step, keeps
// the parameters and the optimizer state, and halves the scale; good steps grow it after the
// growth interval; unscaling by a power of two is exact. And across ranks: one rank's overflow
// reaches every rank through the all-reduce of the scaled gradients, so all of them skip the same
// step and keep the same scale (Note [loss scaling and the all-reduce]).
#include "catch_torch.h"
#include "comm/communicator.h"
#include "comm/traffic/traffic_recorder.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include "comm/gloo_fixture.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology_allreduce.h"
#include "trainer/step/numerics/grad_scaler.h"
#include "trainer/sync/bucketed_allreduce.h"
#include "trainer/sync/comm_worker.h"

using dtbench::trainer::GradScaler;
using dtbench::trainer::GradScalerOptions;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// One parameter [1, 2, 3] and plain SGD (lr 0.5, momentum 0.9, so a step leaves optimizer state).
struct OneParameter {
  at::Tensor p = torch::tensor({1.0f, 2.0f, 3.0f}).requires_grad_(true);
  torch::optim::SGD sgd{{p}, torch::optim::SGDOptions(0.5).momentum(0.9)};

  void setGrad(std::vector<float> values) { p.mutable_grad() = torch::tensor(values); }
};

GradScalerOptions withInterval(int64_t interval, double initScale = 16.0) {
  GradScalerOptions options;
  options.initScale = initScale;
  options.growthInterval = interval;
  return options;
}

}  // namespace

TEST_CASE("GradScaler starts from PyTorch's defaults", "[grad_scaler]") {
  const GradScalerOptions defaults;
  CHECK(defaults.initScale == 65536.0);
  CHECK(defaults.growthFactor == 2.0);
  CHECK(defaults.backoffFactor == 0.5);
  CHECK(defaults.growthInterval == 2000);
  const GradScaler scaler;
  CHECK(scaler.lossScale() == 65536.0);
  CHECK(scaler.scale(torch::tensor(1.5f)).item<double>() == 98304.0);
  CHECK(scaler.scale(torch::tensor(3.0f, at::kHalf)).scalar_type() == at::kFloat);  // 3 x 2^16 > fp16's max
  CHECK(scaler.scale(torch::tensor(3.0f, at::kHalf)).item<double>() == 196608.0);
  CHECK_THROWS_AS(GradScaler(withInterval(0)), std::invalid_argument);
  GradScalerOptions bad;
  bad.backoffFactor = 1.0;
  CHECK_THROWS_AS(GradScaler(bad), std::invalid_argument);
}

TEST_CASE("an inf or NaN gradient skips the step and keeps the parameters and halves the scale", "[grad_scaler]") {
  for (const float poison : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()}) {
    INFO("poison " << poison);
    OneParameter model;
    GradScaler scaler(withInterval(3, 1024.0));
    // A good step first: it moves the parameter and leaves a momentum buffer behind.
    model.setGrad({1024.0f, 2048.0f, -1024.0f});
    REQUIRE(scaler.step(model.sgd));
    scaler.update();
    const at::Tensor afterGood = model.p.detach().clone();
    CHECK(at::equal(afterGood, torch::tensor({0.5f, 1.0f, 3.5f})));
    CHECK(scaler.goodSteps() == 1);

    model.setGrad({1024.0f, poison, 0.0f});
    CHECK_FALSE(scaler.step(model.sgd));
    CHECK(at::equal(model.p.detach(), afterGood));  // untouched: no step, and no momentum applied
    scaler.update();
    CHECK(scaler.lossScale() == 512.0);
    CHECK(scaler.goodSteps() == 0);
    CHECK(scaler.skippedSteps() == 1);

    // The next good step runs with the momentum the skipped step left as it was.
    model.setGrad({512.0f, 512.0f, 512.0f});
    REQUIRE(scaler.step(model.sgd));
    scaler.update();
    // momentum buffer: 0.9 x [1, 2, -1] + [1, 1, 1] = [1.9, 2.8, 0.1]; p -= 0.5 x buffer
    CHECK(at::allclose(model.p.detach(), afterGood - 0.5 * torch::tensor({1.9f, 2.8f, 0.1f})));
  }
}

TEST_CASE("the scale grows after growth_interval good steps in a row", "[grad_scaler]") {
  OneParameter model;
  GradScaler scaler(withInterval(3));
  auto goodStep = [&] {
    model.setGrad({1.0f, 1.0f, 1.0f});
    REQUIRE(scaler.step(model.sgd));
    scaler.update();
  };
  goodStep();
  goodStep();
  CHECK(scaler.lossScale() == 16.0);
  goodStep();  // the third good step in a row
  CHECK(scaler.lossScale() == 32.0);
  CHECK(scaler.goodSteps() == 0);
  goodStep();
  goodStep();
  CHECK(scaler.lossScale() == 32.0);
  model.setGrad({kInf, 1.0f, 1.0f});  // an overflow restarts the count
  CHECK_FALSE(scaler.step(model.sgd));
  scaler.update();
  CHECK(scaler.lossScale() == 16.0);
  goodStep();
  goodStep();
  CHECK(scaler.lossScale() == 16.0);
  goodStep();
  CHECK(scaler.lossScale() == 32.0);
  CHECK(scaler.skippedSteps() == 1);
}

TEST_CASE("unscaling by a power of two is exact", "[grad_scaler]") {
  for (const double initScale : {65536.0, 8.0, 0.25}) {
    INFO("scale " << initScale);
    const at::Tensor w = torch::tensor({0.1f, -3.7f, 1e-6f, 12345.678f});
    at::Tensor p = torch::zeros({4}).requires_grad_(true);
    torch::optim::SGD sgd({p}, torch::optim::SGDOptions(1.0));
    GradScaler scaler(withInterval(2000, initScale));
    scaler.scale((p * w).sum()).backward();
    CHECK(at::equal(p.grad(), w * static_cast<float>(initScale)));  // scaled
    CHECK_FALSE(scaler.unscale(sgd));
    CHECK(at::equal(p.grad(), w));  // bit for bit
    CHECK(scaler.step(sgd));        // unscale() already ran: step() does not divide again
    CHECK(at::equal(p.detach(), -w));
    scaler.update();
  }
}

TEST_CASE("GradScaler refuses a second unscale and an update without one and restores its state",
          "[grad_scaler]") {
  OneParameter model;
  GradScaler scaler(withInterval(5));
  CHECK_THROWS_AS(scaler.update(), std::logic_error);
  model.setGrad({1.0f, 1.0f, 1.0f});
  scaler.unscale(model.sgd);
  CHECK_THROWS_AS(scaler.unscale(model.sgd), std::logic_error);
  scaler.step(model.sgd);
  scaler.update();
  model.setGrad({kInf, 1.0f, 1.0f});
  scaler.step(model.sgd);
  scaler.update();
  model.setGrad({1.0f, 1.0f, 1.0f});
  scaler.step(model.sgd);
  scaler.update();
  const nlohmann::json state = scaler.state();
  CHECK(state.at("scale") == 8.0);
  CHECK(state.at("good_steps") == 1);
  CHECK(state.at("skipped_steps") == 1);
  GradScaler resumed(withInterval(5));
  resumed.restore(state);
  CHECK(resumed.lossScale() == 8.0);
  CHECK(resumed.goodSteps() == 1);
  CHECK(resumed.skippedSteps() == 1);
  // A parameter without a gradient is left alone.
  at::Tensor unused = torch::ones({2}).requires_grad_(true);
  torch::optim::SGD sgd({unused}, torch::optim::SGDOptions(0.1));
  CHECK_FALSE(resumed.unscale(sgd));
  CHECK(resumed.step(sgd));
  CHECK(at::equal(unused.detach(), torch::ones({2})));
}

TEST_CASE("one rank's overflow reaches every rank through the all-reduce: all skip the same step",
          "[grad_scaler][sync]") {
  constexpr int kWorld = 3;
  torch::manual_seed(4);
  const torch::nn::Linear base(4, 2);
  for (const std::string& topology : {std::string("native"), std::string("ring"), std::string("tree"),
                                      std::string("star")}) {
    INFO("topology " << topology);
    struct Outcome {
      bool steppedFirst = true;
      bool steppedSecond = false;
      double scale = 0;
      at::Tensor afterFirst;
      at::Tensor afterSecond;
      at::Tensor before;
    };
    std::vector<torch::nn::Linear> replicas;
    for (int r = 0; r < kWorld; ++r)
      replicas.push_back(std::dynamic_pointer_cast<torch::nn::LinearImpl>(base->clone()));
    const auto outcomes = dtbench::comm::testing::runGlooRanks<Outcome>(kWorld, [&](dtbench::comm::Communicator& gloo) {
      const int rank = gloo.rank();
      dtbench::comm::TrafficRecorder recorder(rank, kWorld);
      dtbench::comm::TopologyAllreduce allreduce(gloo, dtbench::comm::Topology::parse(topology), dtbench::comm::hostsFromRanksPerHost(kWorld, 2),
                                                 recorder);
      dtbench::trainer::CommWorker worker;
      torch::nn::Linear& model = replicas[static_cast<size_t>(rank)];
      dtbench::trainer::BucketedAllreduce sync(*model, gloo, allreduce, worker, {});
      torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
      GradScaler scaler;  // 2^16
      Outcome outcome;
      outcome.before = model->weight.detach().clone();
      auto step = [&](const at::Tensor& input) {
        sync.beforeBackward(1, false);
        scaler.scale(model->forward(input).sum()).backward();
        sync.afterBackward();
        const bool stepped = scaler.step(sgd);
        scaler.update();
        sgd.zero_grad();
        return stepped;
      };
      // Rank 1's input is large: its weight gradient, 1e35 unscaled, overflows fp32 once scaled by
      // 2^16. The other ranks' gradients are small and finite.
      const at::Tensor ordinary = torch::full({2, 4}, 0.5f + static_cast<float>(rank));
      outcome.steppedFirst = step(rank == 1 ? torch::full({2, 4}, 1e35f) : ordinary);
      outcome.afterFirst = model->weight.detach().clone();
      outcome.steppedSecond = step(ordinary);
      outcome.afterSecond = model->weight.detach().clone();
      outcome.scale = scaler.lossScale();
      return outcome;
    });
    for (int r = 0; r < kWorld; ++r) {
      INFO("rank " << r);
      CHECK_FALSE(outcomes[r].steppedFirst);
      CHECK(at::equal(outcomes[r].afterFirst, outcomes[r].before));
      CHECK(outcomes[r].steppedSecond);
      CHECK(outcomes[r].scale == 32768.0);
      CHECK(at::equal(outcomes[r].afterSecond, outcomes[0].afterSecond));
      CHECK_FALSE(at::equal(outcomes[r].afterSecond, outcomes[r].before));
    }
  }
}
