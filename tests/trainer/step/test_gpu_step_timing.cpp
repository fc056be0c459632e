// The GPU side of step timing and of the multi-tensor optimizers (label gpu: skipped where no GPU is
// visible): CUDA phase events measure the work between their marks without a synchronization; a
// run's batches.csv holds every phase under events and sync and leaves the device phases empty under
// none; SGD, Adam and RMSprop equal LibTorch's on CUDA.

#include "catch_torch.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "batches_csv.h"
#include "gpu_skip.h"
#include "optimizer_equivalence.h"
#include "run/run_summary.h"
#include "temp_dir.h"
#include "trainer/config.h"
#include "trainer/step/numerics/multi_tensor_optimizers.h"
#include "trainer/step/phase_events.h"
#include "trainer/trainer.h"

using dtbench::testing::TempDir;
using dtbench::testing::batchesColumn;
using dtbench::trainer::RunConfig;

namespace {

RunConfig smallGpuRun(const std::string& out, dtbench::run::PhaseTiming timing) {
  RunConfig c;
  c.model = "resnet18";
  c.device = dtbench::trainer::DeviceKind::kCuda;
  c.data.dataset = dtbench::trainer::DatasetKind::kSynthetic;
  c.data.syntheticTrainSize = 512;
  c.data.syntheticTestSize = 64;
  c.data.batchSize = 64;
  c.epochs = 2;
  c.maxSteps = 3;
  c.quiet = true;
  c.gpu.phaseTiming = timing;
  c.outDir = out;
  return c;
}

}  // namespace

TEST_CASE("CUDA phase events time the work between their marks without waiting for it", "[gpu][phase_timing]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const c10::Device device(c10::kCUDA, 0);
  const auto source = dtbench::trainer::cudaPhaseEvents(device);
  const torch::Tensor a = torch::randn({2048, 2048}, torch::TensorOptions(device));
  for (int round = 0; round < 3; ++round) {  // the second and third reuse released events
    auto events = source->acquire();
    events->mark(0);
    torch::Tensor b = a;
    for (int i = 0; i < 20; ++i) b = torch::mm(b, a) / 2048.0;
    events->mark(1);
    events->mark(2);  // nothing queued between 1 and 2
    events->waitPassed();
    CHECK(events->passed());
    const double work = events->secondsBetween(0, 1);
    CHECK(work > 0);
    CHECK(events->secondsBetween(1, 2) >= 0);
    CHECK(events->secondsBetween(1, 2) < work);
    source->release(std::move(events));
  }
}

TEST_CASE("batches.csv on a GPU: every phase under events and sync, device phases empty under none", "[gpu][phase_timing]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const TempDir tmp;
  using dtbench::run::PhaseTiming;
  for (PhaseTiming timing : {PhaseTiming::kEvents, PhaseTiming::kSync, PhaseTiming::kNone}) {
    const std::string out = tmp / dtbench::run::phaseTimingNames().name(timing);
    REQUIRE(dtbench::run::summaryJson(dtbench::trainer::Trainer(smallGpuRun(out, timing)).run()).at("status") == "completed");
    const std::vector<std::string> steps = batchesColumn(out, "step_s");
    REQUIRE(steps.size() == 6);  // every step of both epochs, the last of each included
    for (const char* phase : {"h2d_s", "forward_s", "backward_s", "optimizer_s"}) {
      const std::vector<std::string> cells = batchesColumn(out, phase);
      for (size_t i = 0; i < cells.size(); ++i) {
        INFO(dtbench::run::phaseTimingNames().name(timing) << " " << phase << " row " << i + 1);
        if (timing == PhaseTiming::kNone) {
          CHECK(cells[i].empty());
        } else {
          REQUIRE_FALSE(cells[i].empty());
          CHECK(std::stod(cells[i]) >= 0);
          CHECK(std::stod(cells[i]) <= std::stod(steps[i]));
        }
      }
    }
    CHECK_FALSE(batchesColumn(out, "data_s")[0].empty());
  }
}

TEST_CASE("the multi-tensor optimizers equal LibTorch's on CUDA", "[gpu][optimizer]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const c10::Device device(c10::kCUDA, 0);
  using Params = std::vector<torch::Tensor>;
  const auto sgdState = [](const torch::optim::OptimizerParamState& s) {
    return std::vector<torch::Tensor>{static_cast<const torch::optim::SGDParamState&>(s).momentum_buffer()};
  };
  const auto adamState = [](const torch::optim::OptimizerParamState& s) {
    const auto& a = static_cast<const torch::optim::AdamParamState&>(s);
    return std::vector<torch::Tensor>{a.exp_avg(), a.exp_avg_sq()};
  };
  const auto rmspropState = [](const torch::optim::OptimizerParamState& s) {
    const auto& r = static_cast<const torch::optim::RMSpropParamState&>(s);
    return std::vector<torch::Tensor>{r.square_avg(), r.momentum_buffer()};
  };
  const auto sgd = torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4).nesterov(true);
  dtbench::testing::checkSameAsLibTorch([&](Params p) { return std::make_unique<torch::optim::SGD>(p, sgd); },
                                        [&](Params p) { return std::make_unique<dtbench::trainer::MultiTensorSGD>(p, sgd); },
                                        sgdState, device);
  const auto adam = torch::optim::AdamOptions(1e-2).weight_decay(1e-2);
  dtbench::testing::checkSameAsLibTorch([&](Params p) { return std::make_unique<torch::optim::Adam>(p, adam); },
                                        [&](Params p) { return std::make_unique<dtbench::trainer::MultiTensorAdam>(p, adam); },
                                        adamState, device);
  const auto rmsprop = torch::optim::RMSpropOptions(1e-2).momentum(0.9).weight_decay(1e-2);
  dtbench::testing::checkSameAsLibTorch(
      [&](Params p) { return std::make_unique<torch::optim::RMSprop>(p, rmsprop); },
      [&](Params p) { return std::make_unique<dtbench::trainer::MultiTensorRMSprop>(p, rmsprop); }, rmspropState,
      device);
}
