// The GPU path of the trainer (label gpu: skipped where no GPU is visible, tests/gpu_skip.h): every
// model's step on CUDA equals the CPU step; --amp bf16 and fp16 (loss scaling), --channels-last,
// --data-on-device and --mode dp train on the GPU to what the plain GPU run computes; --backend nccl
// trains at world 1.

#include "catch_torch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <torch/nn/functional/loss.h>

#include "batches_csv.h"
#include "gpu_skip.h"
#include "models/classifier.h"
#include "models/registry.h"
#include "run/run_summary.h"
#include "temp_dir.h"
#include "trainer/config.h"
#include "trainer/step/numerics/optimizer.h"
#include "trainer/trainer.h"

using dtbench::testing::TempDir;
using dtbench::testing::batchesColumn;
using dtbench::trainer::RunConfig;

namespace {

// Full float32 on both sides: cuDNN's convolutions may otherwise use TF32 (a 10-bit mantissa).
struct ExactFloat32 {
  ExactFloat32() : before_(at::globalContext().allowTF32CuDNN()) { at::globalContext().setAllowTF32CuDNN(false); }
  ~ExactFloat32() { at::globalContext().setAllowTF32CuDNN(before_); }
  ExactFloat32(const ExactFloat32&) = delete;
  ExactFloat32& operator=(const ExactFloat32&) = delete;

 private:
  bool before_;
};

struct StepResult {
  double loss = 0;
  std::vector<at::Tensor> parameters;  // after the optimizer step, on the CPU
  std::vector<at::Tensor> buffers;
};

// One training step as the trainer takes it: forward, cross-entropy, backward, SGD with momentum and
// weight decay.
StepResult trainingStep(const dtbench::models::ClassifierPtr& model, const at::Tensor& images, const at::Tensor& labels) {
  RunConfig config;  // the default optimizer: SGD, momentum 0.9, weight decay 5e-4
  config.optimizer.lr = 0.05;
  const auto optimizer = dtbench::trainer::makeOptimizer(config, model->module().parameters());
  model->module().train();
  const at::Tensor loss = torch::nn::functional::cross_entropy(model->forward(images), labels);
  optimizer->zero_grad();
  loss.backward();
  optimizer->step();
  StepResult result{loss.item<double>(), {}, {}};
  for (const auto& p : model->module().parameters()) result.parameters.push_back(p.detach().cpu());
  for (const auto& b : model->module().buffers()) result.buffers.push_back(b.detach().cpu());
  return result;
}

std::vector<double> batchLosses(const std::string& out) {
  std::ifstream in(out + "/train_history.log");
  std::string line;
  std::vector<double> losses;
  std::getline(in, line);
  while (std::getline(in, line)) {
    if (line.find(",Batch,") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5; ++i) std::getline(fields, field, ',');
    losses.push_back(std::stod(field));
  }
  return losses;
}

nlohmann::json readJson(const std::string& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

RunConfig onGpu(const std::string& out, const std::string& model = "resnet18") {
  RunConfig c;
  c.model = model;
  c.device = dtbench::trainer::DeviceKind::kCuda;
  c.data.dataset = dtbench::trainer::DatasetKind::kSynthetic;
  c.data.syntheticTrainSize = 512;
  c.data.syntheticTestSize = 128;
  c.data.batchSize = 64;
  c.epochs = 2;
  c.maxSteps = 4;
  c.optimizer.lr = 0.02;
  c.seed = 5;
  c.quiet = true;
  c.outDir = out;
  return c;
}

// Runs `config` and returns its batch losses (rank 0, in step order); the run must complete.
std::vector<double> train(const RunConfig& config) {
  const nlohmann::json summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(config).run());
  REQUIRE(summary.at("status") == "completed");
  return batchLosses(config.outDir);
}

void checkClose(const std::vector<double>& actual, const std::vector<double>& expected, double relative) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("step " << i + 1 << ": " << actual[i] << " against " << expected[i]);
    CHECK(std::isfinite(actual[i]));
    CHECK(actual[i] == Approx(expected[i]).epsilon(relative));
  }
}

}  // namespace

TEST_CASE("every model's training step on CUDA equals its step on the CPU", "[gpu][models]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const ExactFloat32 exact;
  const torch::Device cuda(torch::kCUDA, 0);
  for (const std::string& name : dtbench::models::modelNames()) {
    INFO("model " << name);
    torch::manual_seed(11);
    const auto cpu = dtbench::models::makeModel(name);
    const auto gpu = dtbench::models::cloneClassifier(*cpu, cuda);
    const at::Tensor images = torch::randn({4, 3, 32, 32});
    const at::Tensor labels = torch::randint(0, 10, {4}, at::kLong);
    const StepResult onCpu = trainingStep(cpu, images, labels);
    const StepResult onGpu = trainingStep(gpu, images.to(cuda), labels.to(cuda));
    CHECK(onGpu.loss == Approx(onCpu.loss).epsilon(1e-4));
    REQUIRE(onGpu.parameters.size() == onCpu.parameters.size());
    for (size_t i = 0; i < onCpu.parameters.size(); ++i) {
      INFO("parameter " << i);
      CHECK(at::allclose(onGpu.parameters[i], onCpu.parameters[i], /*rtol=*/1e-3, /*atol=*/1e-5));
    }
    REQUIRE(onGpu.buffers.size() == onCpu.buffers.size());
    for (size_t i = 0; i < onCpu.buffers.size(); ++i) {
      INFO("buffer " << i);
      CHECK(at::allclose(onGpu.buffers[i].to(at::kDouble), onCpu.buffers[i].to(at::kDouble), 1e-3, 1e-5));
    }
  }
}

TEST_CASE("mixed precision (--amp bf16 and fp16 with loss scaling) trains on the GPU close to float32", "[gpu][amp]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  TempDir tmp;
  const std::vector<double> fp32 = train(onGpu(tmp / "fp32"));
  for (const auto amp : {dtbench::trainer::Amp::kBf16, dtbench::trainer::Amp::kFp16}) {
    const bool fp16 = amp == dtbench::trainer::Amp::kFp16;
    INFO((fp16 ? "fp16" : "bf16"));
    RunConfig config = onGpu(tmp / (fp16 ? "fp16" : "bf16"));
    config.precision.amp = amp;
    const std::vector<double> mixed = train(config);
    REQUIRE(mixed.size() == fp32.size());
    CHECK(mixed.front() == Approx(fp32.front()).epsilon(0.05));  // the same model, a coarser forward
    bool differs = false;
    for (size_t i = 0; i < mixed.size(); ++i) {
      CHECK(std::isfinite(mixed[i]));
      differs = differs || mixed[i] != fp32[i];
    }
    CHECK(differs);  // autocast really ran
    const auto summary = readJson(config.outDir + "/summary.json");
    CHECK(std::isfinite(summary.at("param_checksum").get<double>()));
    if (fp16) {
      // The scaler's state is recorded; it skipped at most the first few steps (scale too large).
      INFO(summary.dump());
      REQUIRE(summary.contains("loss_scale"));
      CHECK(summary.at("loss_scale").get<double>() > 0);
      CHECK(summary.at("skipped_steps").get<int64_t>() < static_cast<int64_t>(mixed.size()) / 2);
    }
  }
}

TEST_CASE("channels-last and data on the device and mode dp train on one GPU to the plain GPU run", "[gpu][layout]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const ExactFloat32 exact;
  TempDir tmp;
  const std::vector<double> plain = train(onGpu(tmp / "plain"));
  SECTION("--channels-last") {
    RunConfig config = onGpu(tmp / "nhwc");
    config.precision.channelsLast = true;
    checkClose(train(config), plain, 1e-3);
  }
  SECTION("--data-on-device: the same batches, augmented on the GPU") {
    RunConfig config = onGpu(tmp / "on-device");
    config.data.onDevice = true;
    checkClose(train(config), plain, 1e-4);
  }
  SECTION("--mode dp: one GPU is a plain forward") {
    RunConfig config = onGpu(tmp / "dp");
    config.mode = dtbench::trainer::ParallelMode::kDp;
    checkClose(train(config), plain, 1e-4);
    CHECK(readJson(config.outDir + "/config.json").at("dp_devices").get<int64_t>() >= 1);
  }
}

TEST_CASE("the nccl backend trains at world 1 and records the version of NCCL", "[gpu][nccl]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  TempDir tmp;
  const std::vector<double> plain = train(onGpu(tmp / "plain", "lenet"));
  RunConfig config = onGpu(tmp / "nccl", "lenet");
  config.comm.connection.backend = dtbench::comm::Backend::kNccl;
  // One rank's all-reduce is the identity: the gradients, and so the losses, are the plain run's.
  checkClose(train(config), plain, 1e-5);
  const auto environment = readJson(config.outDir + "/config.json").at("environment");
  CHECK(environment.at("nccl_version").get<std::string>().rfind("2.", 0) == 0);
  CHECK(environment.at("gpus_visible").get<int>() >= 1);
  CHECK(readJson(config.outDir + "/config.json").at("backend") == "nccl");
}

TEST_CASE("gradient compression runs on the GPU over nccl: fp16 close to float32, PowerSGD timed and finite",
          "[gpu][nccl][compression]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  TempDir tmp;
  RunConfig plainConfig = onGpu(tmp / "plain", "lenet");
  plainConfig.comm.connection.backend = dtbench::comm::Backend::kNccl;
  const std::vector<double> plain = train(plainConfig);
  SECTION("fp16: the bucket cast on the GPU, summed by NCCL in float16 and cast back") {
    RunConfig config = plainConfig;
    config.outDir = tmp / "fp16";
    config.sync.compress = dtbench::trainer::Compression::kFp16;
    checkClose(train(config), plain, 1e-2);  // one rank: the gradients rounded to float16 only
    for (const std::string& cell : batchesColumn(config.outDir, "compress_s")) CHECK(std::stod(cell) > 0);
    CHECK(readJson(config.outDir + "/config.json").at("bucket_collectives")[0][0].at("dtype") == "float16");
  }
  SECTION("powersgd: factors on the GPU from step 3, every loss finite, the encoding timed") {
    RunConfig config = plainConfig;
    config.outDir = tmp / "powersgd";
    config.sync.compress = dtbench::trainer::Compression::kPowerSgd;
    const std::vector<double> losses = train(config);
    REQUIRE(losses.size() == plain.size());
    for (size_t i = 0; i < losses.size(); ++i) CHECK(std::isfinite(losses[i]));
    CHECK(losses[0] == Approx(plain[0]).epsilon(1e-5));  // steps 1 and 2 uncompressed
    CHECK(losses[1] == Approx(plain[1]).epsilon(1e-5));
    const std::vector<std::string> codec = batchesColumn(config.outDir, "compress_s");
    REQUIRE(codec.size() == losses.size());
    CHECK(std::stod(codec[1]) == 0);
    for (size_t i = 2; i < codec.size(); ++i) CHECK(std::stod(codec[i]) > 0);
  }
}

TEST_CASE("one rank's step captured in a CUDA graph (--cuda-graph) trains as the eager step does", "[gpu][cuda_graph]") {
  DTBENCH_SKIP_WITHOUT_GPU();
  const ExactFloat32 exact;
  TempDir tmp;
  for (const bool bf16 : {false, true}) {
    INFO((bf16 ? "bf16 + channels-last" : "fp32"));
    // 520 images in batches of 64: each epoch ends with a batch of 8, which the graph does not fit and
    // takes the eager step.
    RunConfig eager = onGpu(tmp / (bf16 ? "eager-bf16" : "eager"));
    eager.data.syntheticTrainSize = 520;
    eager.maxSteps = 0;
    eager.gpu.cudnnBenchmark = false;  // the same convolution algorithms in both runs
    if (bf16) {
      eager.precision.amp = dtbench::trainer::Amp::kBf16;
      eager.precision.channelsLast = true;
    }
    RunConfig graph = eager;
    graph.outDir = tmp / (bf16 ? "graph-bf16" : "graph");
    graph.gpu.cudaGraph = true;
    const std::vector<double> expected = train(eager);
    REQUIRE(expected.size() == 18);
    checkClose(train(graph), expected, bf16 ? 2e-2 : 1e-4);
    // Replayed steps (the 4th to 8th of each epoch) leave the device phases empty; eager ones fill them.
    const std::vector<std::string> forward = batchesColumn(graph.outDir, "forward_s");
    REQUIRE(forward.size() == 18);
    for (size_t k = 0; k < forward.size(); ++k) {
      INFO("row " << k);
      const bool replayed = k >= 3 && k % 9 != 8;
      CHECK(forward[k].empty() == replayed);
    }
  }
}
