// trainer/step/graph/graphed_train_step.h on the CPU, through a DeviceGraph that records the step's host code and runs
// it again at each replay (a CUDA graph records the kernels instead; the gpu label checks that one,
// tests/trainer/test_gpu_training.cpp): the captured step reads the batch from its static inputs and
// the learning rate from the optimizer's tensors, so replays over new batches train exactly as eager
// steps do; a capture runs nothing; the learning rate set between replays is the one used; a batch
// of another shape is refused. And TrainStep's use of it: three eager steps, then replays, an
// epoch's smaller last batch eager, the replayed steps' device phases not timed.

#include "catch_torch.h"

#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include "compat/torch_compat.h"
#include "models/registry.h"
#include "trainer/step/graph/device_graph.h"
#include "trainer/step/graph/graphed_train_step.h"
#include "trainer/step/numerics/multi_tensor_optimizers.h"
#include "trainer/step/phase_events.h"
#include "trainer/step/train_step.h"

using dtbench::trainer::GraphedTrainStep;
using dtbench::trainer::GraphedTrainStepParts;
using dtbench::trainer::MultiTensorSGD;
using dtbench::trainer::DeviceGraph;

namespace {

// Keeps the body at capture, runs it at each replay.
class RerunGraph final : public DeviceGraph {
 public:
  explicit RerunGraph(int* replays) : replays_(replays) {}
  void capture(const std::function<void()>& body) override { body_ = body; }
  void replay() override {
    body_();
    ++*replays_;
  }

 private:
  std::function<void()> body_;
  int* replays_;
};

struct Batch {
  at::Tensor images, labels;
};

std::vector<Batch> batches(int count, int64_t size) {
  torch::manual_seed(11);
  std::vector<Batch> out;
  for (int k = 0; k < count; ++k) out.push_back({at::randn({size, 3, 32, 32}), at::randint(0, 10, {size})});
  return out;
}

struct Trained {
  dtbench::models::ClassifierPtr model;
  std::unique_ptr<MultiTensorSGD> optimizer;
};

Trained fresh() {
  torch::manual_seed(3);
  Trained t;
  t.model = dtbench::models::makeModel("lenet");
  t.model->module().train();
  t.optimizer = std::make_unique<MultiTensorSGD>(
      t.model->module().parameters(), torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(5e-4));
  t.optimizer->keepLearningRatesInTensors(c10::Device(c10::kCPU));
  return t;
}

// The eager step of trainer/step/train_step.cpp (no autocast, one rank); returns the loss.
double eagerStep(Trained& t, const Batch& b) {
  t.optimizer->refreshLearningRates();
  const at::Tensor loss = torch::nn::functional::cross_entropy(t.model->forward(b.images), b.labels);
  loss.backward();
  t.optimizer->step();
  dtbench::compat::zeroGradInPlace(*t.optimizer);
  return loss.item<double>();
}

GraphedTrainStep captured(Trained& t, int* replays) {
  return GraphedTrainStep(GraphedTrainStepParts{t.model, *t.optimizer, std::nullopt, false, c10::Device(c10::kCPU)},
                          std::make_unique<RerunGraph>(replays));
}

void checkSameParameters(Trained& a, Trained& b) {
  const auto pa = a.model->module().parameters();
  const auto pb = b.model->module().parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t k = 0; k < pa.size(); ++k) CHECK(torch::equal(pa[k], pb[k]));
}

}  // namespace

TEST_CASE("replays of the captured step over new batches train as eager steps do, bit for bit",
          "[graphed_train_step]") {
  const std::vector<Batch> data = batches(6, 8);
  Trained eager = fresh();
  Trained graphed = fresh();
  int replays = 0;
  GraphedTrainStep step = captured(graphed, &replays);
  for (size_t k = 0; k < data.size(); ++k) {
    const double expected = eagerStep(eager, data[k]);
    if (k < 2) {  // the warm-up: eager steps on the same model and optimizer
      CHECK(eagerStep(graphed, data[k]) == expected);
      continue;
    }
    REQUIRE(step.accepts(data[k].images, data[k].labels));
    step.load(data[k].images, data[k].labels);
    if (!step.captured()) {
      step.capture();
      CHECK(replays == 0);
    }
    step.replay();
    const at::Tensor out = step.outputs();
    REQUIRE(out.numel() == 2);
    CHECK(out[0].item<double>() == Approx(expected).epsilon(1e-6));
    CHECK(out[1].item<double>() >= 0);
    CHECK(out[1].item<double>() <= 8);
  }
  CHECK(replays == 4);
  checkSameParameters(eager, graphed);
}

TEST_CASE("the captured step uses the learning rate set before each replay", "[graphed_train_step]") {
  const std::vector<Batch> data = batches(3, 4);
  Trained t = fresh();
  int replays = 0;
  GraphedTrainStep step = captured(t, &replays);
  eagerStep(t, data[0]);
  step.load(data[1].images, data[1].labels);
  step.capture();
  step.replay();
  std::vector<at::Tensor> before;
  for (const auto& p : t.model->module().parameters()) before.push_back(p.detach().clone());
  for (auto& group : t.optimizer->param_groups()) group.options().set_lr(0.0);
  step.load(data[2].images, data[2].labels);
  step.replay();
  const auto after = t.model->module().parameters();
  for (size_t k = 0; k < before.size(); ++k) CHECK(torch::equal(before[k], after[k]));
  for (auto& group : t.optimizer->param_groups()) group.options().set_lr(0.05);
  step.replay();
  CHECK_FALSE(torch::equal(before[0], t.model->module().parameters()[0]));
}

TEST_CASE("a batch of another shape does not fit the captured step, and replay needs a capture",
          "[graphed_train_step]") {
  Trained t = fresh();
  int replays = 0;
  GraphedTrainStep step = captured(t, &replays);
  CHECK_THROWS_WITH(step.replay(), Catch::Contains("before capture"));
  CHECK_THROWS_WITH(step.capture(), Catch::Contains("load()"));
  const Batch full = batches(1, 8)[0];
  const Batch last = batches(1, 5)[0];
  CHECK(step.accepts(last.images, last.labels));  // nothing loaded yet
  step.load(full.images, full.labels);
  CHECK_FALSE(step.accepts(last.images, last.labels));
  CHECK_FALSE(step.accepts(full.images.to(at::kDouble), full.labels));
  CHECK_THROWS_WITH(step.load(last.images, last.labels), Catch::Contains("does not fit"));
  step.capture();
  CHECK_THROWS_WITH(step.capture(), Catch::Contains("captured already"));
}

TEST_CASE("a CUDA device graph needs a CUDA device", "[graphed_train_step]") {
  CHECK_THROWS_AS(dtbench::trainer::cudaDeviceGraph(c10::Device(c10::kCPU)), std::invalid_argument);
}

namespace {

// A synthetic epoch of 7 batches: six of 8 images, the last of 5, the same for every run.
dtbench::data::Batch syntheticBatch(int64_t epoch, int64_t index) {
  const at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(epoch * 1000 + index));
  const int64_t size = index == 6 ? 5 : 8;
  return {at::randn({size, 3, 32, 32}, g), at::randint(0, 10, {size}, g), {}};
}

struct StepRun {
  std::vector<double> losses;
  std::vector<bool> replayed;
  std::vector<size_t> deferred;  // columns left to fill from the phase marks
  std::vector<double> forward;
};

// Two epochs through TrainStep on the CPU, with --cuda-graph through RerunGraph or without it.
StepRun trainGraphSteps(bool cudaGraph, Trained& t, int* replays) {
  dtbench::trainer::RunConfig config;
  config.gpu.cudaGraph = cudaGraph;
  config.gpu.phaseTiming = dtbench::run::PhaseTiming::kEvents;
  dtbench::data::PrefetchLoader loader(syntheticBatch, 7, dtbench::data::PrefetchOptions{0, 0, false});
  dtbench::trainer::StopSignalHandler stop;
  const dtbench::trainer::TraceClock clock;
  const std::unique_ptr<dtbench::trainer::PhaseEventSource> events = dtbench::trainer::hostClockEvents();
  dtbench::trainer::TrainStep step(dtbench::trainer::StepParts{
      config, c10::Device(c10::kCPU), loader, t.model, *t.optimizer, std::nullopt, nullptr, nullptr, nullptr, nullptr,
      stop, clock, events.get(), [replays](c10::Device) { return std::make_unique<RerunGraph>(replays); }});
  StepRun run;
  int64_t global = 0;
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    loader.startEpoch(epoch);
    for (int64_t s = 1; s <= 7; ++s) {
      dtbench::trainer::StepOutcome o = step.run(epoch, s, ++global, nullptr);
      run.losses.push_back(o.record.loss);
      run.replayed.push_back(o.replayed);
      run.deferred.push_back(o.deferredPhases.size());
      CHECK(o.record.samples == (s == 7 ? 5 : 8));
      REQUIRE(o.events);
      dtbench::trainer::fillPhases(o.record, *o.events, o.deferredPhases);  // host marks: passed at once
      events->release(std::move(o.events));
      run.forward.push_back(o.record.forwardS);
    }
  }
  return run;
}

}  // namespace

TEST_CASE("TrainStep with --cuda-graph: three eager steps, then replays, a smaller batch eager, same training",
          "[graphed_train_step]") {
  int replays = 0;
  Trained eager = fresh();
  Trained graphed = fresh();
  const StepRun expected = trainGraphSteps(false, eager, &replays);
  const StepRun actual = trainGraphSteps(true, graphed, &replays);
  REQUIRE(actual.losses.size() == 14);
  for (size_t k = 0; k < actual.losses.size(); ++k) {
    INFO("step " << k + 1);
    const bool replay = k >= 3 && k % 7 != 6;  // the 4th to 6th, then the 8th to 13th; the 7th and 14th are smaller
    CHECK(expected.replayed[k] == false);
    CHECK(actual.replayed[k] == replay);
    CHECK(actual.losses[k] == expected.losses[k]);
    CHECK(expected.deferred[k] == 4);                    // h2d, forward, backward, optimizer
    CHECK(actual.deferred[k] == (replay ? 1u : 4u));     // a replay: the copy into the static inputs only
    CHECK(std::isnan(actual.forward[k]) == replay);      // replayed: never timed; eager: filled from the marks
  }
  CHECK(replays == 9);
  checkSameParameters(eager, graphed);
}
