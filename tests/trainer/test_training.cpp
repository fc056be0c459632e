// Short real training runs through the Trainer: it learns, it writes the run directory of the
// contract, and it is reproducible from its seed.

#include "catch_torch.h"
#include "common/named_values.h"
#include "models/classifier.h"
#include "models/flop_count.h"
#include "trainer/config.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "dtbench/build_config.h"

#include "models/registry.h"
#include "run/config_schema.h"
#include "run/run_facts.h"
#include "run/run_summary.h"
#include "temp_dir.h"
#include "trainer/step/numerics/precision.h"
#include "trainer/trainer.h"

using dtbench::testing::TempDir;
using dtbench::trainer::RunConfig;

namespace {

struct HistoryLine {
  std::string type;
  int64_t epoch = 0;
  int64_t step = 0;
  double loss = 0;
  std::string accuracy;
};

std::vector<HistoryLine> readHistory(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "Timestamp,Type,Epoch,Step,Loss,Accuracy,ImagesPerSec");
  std::vector<HistoryLine> rows;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string timestamp, type, epoch, step, loss, accuracy, imagesPerSec;
    std::getline(fields, timestamp, ',');
    std::getline(fields, type, ',');
    std::getline(fields, epoch, ',');
    std::getline(fields, step, ',');
    std::getline(fields, loss, ',');
    std::getline(fields, accuracy, ',');
    std::getline(fields, imagesPerSec, ',');
    REQUIRE(std::stod(timestamp) > 1.6e9);  // Unix seconds
    REQUIRE(std::stod(imagesPerSec) > 0);
    rows.push_back({type, std::stoll(epoch), std::stoll(step), std::stod(loss), accuracy});
  }
  return rows;
}

nlohmann::json readJson(const std::string& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

RunConfig lenetOnSynthetic(const std::string& out) {
  RunConfig c;
  c.model = "lenet";
  c.data.dataset = dtbench::trainer::DatasetKind::kSynthetic;
  c.data.syntheticTrainSize = 1024;
  c.data.syntheticTestSize = 500;
  c.data.batchSize = 32;
  c.epochs = 2;
  c.optimizer.lr = 0.02;
  c.threads = 1;
  c.seed = 3;
  c.quiet = true;
  c.outDir = out;
  return c;
}

}  // namespace

TEST_CASE("LeNet learns the synthetic task and writes the run directory", "[training]") {
  TempDir tmp;
  const std::string out = tmp / "run";
  const RunConfig config = lenetOnSynthetic(out);
  const nlohmann::json summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(config).run());

  const auto history = readHistory(out + "/train_history.log");
  std::vector<HistoryLine> batches, epochs;
  for (const auto& row : history) (row.type == "Batch" ? batches : epochs).push_back(row);
  REQUIRE(batches.size() == 64);  // 2 epochs x 1024/32 steps
  REQUIRE(epochs.size() == 2);
  CHECK(batches.front().step == 1);
  CHECK(batches.back().step == 64);  // Batch rows count global steps
  CHECK(epochs[1].step == 32);       // Epoch rows count the epoch's steps

  double first = 0, last = 0;
  for (int i = 0; i < 8; ++i) {
    first += batches[static_cast<size_t>(i)].loss / 8;
    last += batches[batches.size() - 1 - static_cast<size_t>(i)].loss / 8;
  }
  INFO("mean loss of the first 8 batches " << first << ", of the last 8 " << last);
  CHECK(first > 2.0);        // about ln(10) = 2.30 at the start
  CHECK(last < 0.5 * first);  // falls clearly
  CHECK(std::stod(epochs[1].accuracy) > 0.5);  // 10 classes: chance is 0.1

  CHECK(summary.at("status") == "completed");
  const auto onDisk = readJson(out + "/summary.json");
  CHECK(onDisk.at("status") == "completed");
  REQUIRE(onDisk.at("epochs").size() == 2);
  const auto& epoch2 = onDisk.at("epochs")[1];
  CHECK(epoch2.at("steps") == 32);
  CHECK(epoch2.at("samples") == 1024);
  CHECK(epoch2.at("extrapolated") == false);
  CHECK(epoch2.at("train_time_s").get<double>() > 0);
  CHECK(epoch2.at("comm_total_s").get<double>() == 0);  // one rank: nothing to synchronize
  CHECK(epoch2.at("test_accuracy").get<double>() == Approx(std::stod(epochs[1].accuracy)).margin(1e-6));
  CHECK(std::isfinite(onDisk.at("param_checksum").get<double>()));

  const auto configJson = readJson(out + "/config.json");
  CHECK(configJson.at("model") == "lenet");
  CHECK(configJson.at("seed") == 3);
  CHECK(configJson.at("lr") == 0.02);
  CHECK(configJson.at("momentum") == 0.9);
  CHECK(configJson.at("model_parameters") == 62006);
  // The LibTorch this build runs on, with its CUDA, cuDNN and NCCL where it has them (no GPU needed).
  const auto& environment = configJson.at("environment");
  CHECK(environment.at("libtorch_version") == TORCH_VERSION);
  if (DTBENCH_TORCH_HAS_CUDA) {
    CHECK(environment.at("libtorch_cuda_version").get<std::string>().find('.') != std::string::npos);
    CHECK(environment.at("cudnn_version").get<std::string>().find('.') != std::string::npos);
    CHECK(environment.at("nccl_version").get<std::string>().find('.') != std::string::npos);
    CHECK(environment.at("build").at("torch_cuda") == true);
  } else {
    CHECK(environment.at("libtorch_cuda_version").is_null());
    CHECK(environment.at("nccl_version").is_null());
  }
  CHECK(environment.at("gpus_visible").get<int>() >= 0);
  CHECK_THAT(configJson.at("environment").at("allocator").get<std::string>(), Catch::Contains("glibc"));

  // step_profile.json: when each gradient became ready, the median over the steps after the first.
  const auto profile = readJson(out + "/step_profile.json");
  CHECK(profile.at("rank") == 0);
  CHECK(profile.at("steps") == 63);
  const double backwardS = profile.at("backward_s").get<double>();
  CHECK(backwardS > 0);
  const auto& parameters = profile.at("parameters");
  REQUIRE(parameters.size() == 10);  // LeNet: five layers, a weight and a bias each, in model order
  int64_t elements = 0;
  for (const auto& p : parameters) {
    INFO(p.dump());
    elements += p.at("elements").get<int64_t>();
    CHECK(p.at("dtype") == "float32");
    REQUIRE(p.at("ready_s").is_number());
    const double ready = p.at("ready_s").get<double>();
    CHECK(std::isfinite(ready));
    CHECK(ready >= 0);
    CHECK(ready <= backwardS * 1.5 + 0.01);
  }
  CHECK(elements == configJson.at("model_parameters").get<int64_t>());
  CHECK(parameters.front().at("name") == "conv1.weight");
  CHECK(parameters.back().at("name") == "fc3.bias");
  // Backward runs from the classifier to the first convolution.
  CHECK(parameters.back().at("ready_s").get<double>() <= parameters.front().at("ready_s").get<double>());

  std::ifstream batchesCsv(out + "/batches.csv");
  std::string line;
  int64_t rows = -1;
  double stepSum = 0;
  while (std::getline(batchesCsv, line)) {
    if (++rows == 0) continue;
    std::vector<double> v;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) v.push_back(std::stod(f));
    REQUIRE(v.size() == 16);  // batches.csv's columns (run/step_record.cpp)
    const double phases = v[4] + v[5] + v[6] + v[7] + v[9] + v[10];
    CHECK(v[11] >= phases);  // step_s covers every phase
    stepSum += v[11];
  }
  CHECK(rows == 64);
  CHECK(stepSum == Approx(onDisk.at("epochs")[0].at("step_s").get<double>() + epoch2.at("step_s").get<double>()));
}

TEST_CASE("the same seed gives the same parameters and another seed does not", "[training]") {
  TempDir tmp;
  auto checksum = [&](uint64_t seed, const std::string& name) {
    RunConfig c = lenetOnSynthetic(tmp / name);
    c.seed = seed;
    c.epochs = 1;
    c.maxSteps = 6;
    c.evaluate = false;
    return dtbench::run::summaryJson(dtbench::trainer::Trainer(c).run()).at("param_checksum").get<double>();
  };
  const double a = checksum(5, "a");
  CHECK(checksum(5, "b") == a);
  CHECK(checksum(6, "c") != a);
}

TEST_CASE("max-steps cuts an epoch and marks it extrapolated", "[training]") {
  TempDir tmp;
  RunConfig c = lenetOnSynthetic(tmp / "run");
  c.epochs = 1;
  c.maxSteps = 5;
  c.evaluate = false;
  const auto summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(c).run());
  const auto& e = summary.at("epochs")[0];
  CHECK(e.at("steps") == 5);
  CHECK(e.at("full_epoch_steps") == 32);
  CHECK(e.at("extrapolated") == true);
  CHECK(e.at("extrapolated_epoch_s").get<double>() == Approx(e.at("train_time_s").get<double>() / 5 * 32));
  CHECK(e.at("test_accuracy").is_null());
}

TEST_CASE("every optimizer trains", "[training]") {
  TempDir tmp;
  for (const char* name : {"adam", "rmsprop"}) {
    RunConfig c = lenetOnSynthetic(tmp / name);
    c.optimizer.kind = dtbench::trainer::optimizerNames().parse(name);
    c.optimizer.lr = -1;  // the optimizer's default
    c.optimizer.momentum = -1;
    c.epochs = 1;
    c.evaluate = false;
    const auto summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(dtbench::trainer::resolveDefaults(c)).run());
    INFO(name);
    CHECK(summary.at("epochs")[0].at("train_loss").get<double>() < 2.2);
  }
}

namespace {

std::vector<double> batchLosses(const std::string& out) {
  std::vector<double> losses;
  for (const auto& row : readHistory(out + "/train_history.log"))
    if (row.type == "Batch") losses.push_back(row.loss);
  return losses;
}

}  // namespace

TEST_CASE("bf16 autocast trains on the CPU close to fp32 and not identical to it", "[training][amp]") {
  TempDir tmp;
  auto run = [&](const std::string& amp) {
    RunConfig c = lenetOnSynthetic(tmp / amp);
    c.epochs = 1;
    c.maxSteps = 6;
    c.evaluate = false;
    c.precision.amp = dtbench::trainer::ampNames().parse(amp);
    const auto summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(c).run());
    CHECK(summary.at("amp") == amp);
    CHECK(summary.at("loss_scale").is_null());  // loss scaling is fp16's
    CHECK(summary.at("skipped_steps") == 0);
    CHECK(readJson(c.outDir + "/config.json").at("amp") == amp);
    CHECK(readJson(c.outDir + "/summary.json").at("amp") == amp);
    return batchLosses(c.outDir);
  };
  const std::vector<double> fp32 = run("off");
  const std::vector<double> bf16 = run("bf16");
  REQUIRE(fp32.size() == 6);
  REQUIRE(bf16.size() == 6);
  bool differs = false;
  for (size_t i = 0; i < fp32.size(); ++i) {
    INFO("step " << i + 1 << ": fp32 loss " << fp32[i] << ", bf16 loss " << bf16[i]);
    CHECK(std::isfinite(bf16[i]));
    // bf16 keeps 8 significant bits: the same start, drifting apart slowly.
    CHECK(bf16[i] == Approx(fp32[i]).epsilon(i == 0 ? 0.01 : 0.05));
    differs = differs || bf16[i] != fp32[i];
  }
  CHECK(differs);  // the run really computed in bf16
}

TEST_CASE("channels-last trains to the loss of the contiguous layout", "[training][channels_last]") {
  TempDir tmp;
  auto run = [&](bool channelsLast, const std::string& name) {
    RunConfig c = lenetOnSynthetic(tmp / name);
    c.model = "resnet18";
    c.data.syntheticTrainSize = 64;
    c.data.batchSize = 8;
    c.epochs = 1;
    c.maxSteps = 3;
    c.optimizer.lr = 0.002;  // a calm start: larger steps on batches of 8 amplify rounding differences
    c.evaluate = false;
    c.precision.channelsLast = channelsLast;
    const auto summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(c).run());
    CHECK(readJson(c.outDir + "/config.json").at("channels_last") == channelsLast);
    return std::make_pair(batchLosses(c.outDir), summary.at("param_checksum").get<double>());
  };
  const auto [contiguous, contiguousChecksum] = run(false, "nchw");
  const auto [last, lastChecksum] = run(true, "nhwc");
  REQUIRE(contiguous.size() == 3);
  REQUIRE(last.size() == 3);
  for (size_t i = 0; i < last.size(); ++i) {
    INFO("step " << i + 1 << ": NCHW loss " << contiguous[i] << ", NHWC loss " << last[i]);
    // Another summation order, the same maths: oneDNN picks kernels by the CPU's instruction set,
    // and on some machines step 3 differs by 1.6e-4 relative (2.20424 against 2.20390).
    CHECK(last[i] == Approx(contiguous[i]).epsilon(5e-4));
  }
  CHECK(lastChecksum == Approx(contiguousChecksum).epsilon(1e-4));
}

TEST_CASE("every model runs in channels-last", "[training][channels_last]") {
  // Every model flattens its last feature map in logical order (flatten, not view), so NHWC
  // activations give the NCHW model's logits; lenet's 16x5x5 map is the one where view() would not.
  torch::NoGradGuard noGrad;
  const at::Tensor nchw = torch::randn({1, 3, 32, 32});
  const at::Tensor x = dtbench::trainer::inMemoryFormat(nchw, true);
  for (const std::string& name : dtbench::models::modelNames()) {
    INFO(name);
    const auto model = dtbench::models::makeModel(name);
    model->module().eval();
    const at::Tensor expected = model->forward(nchw);
    dtbench::trainer::toChannelsLast(model->module());
    const at::Tensor logits = model->forward(x);
    CHECK(logits.sizes() == at::IntArrayRef({1, 10}));
    if (name == "lenet") CHECK(logits.allclose(expected, /*rtol=*/1e-4, /*atol=*/1e-5));
  }
}

TEST_CASE("a one-step run's config.json holds exactly the schema's keys", "[training][schema]") {
  TempDir tmp;
  RunConfig config = lenetOnSynthetic(tmp / "run");
  config.epochs = 1;
  config.maxSteps = 1;
  config.evaluate = false;
  dtbench::run::summaryJson(dtbench::trainer::Trainer(config).run());
  const nlohmann::json written = readJson(tmp / "run" + "/config.json");
  std::set<std::string> expected;
  const nlohmann::json settings = dtbench::run::settingsJson(config);
  for (const auto& [key, value] : settings.items()) expected.insert(key);
  // One rank over gloo: the facts of every run, none of a world's (hosts, buckets) or of --mode dp.
  for (const char* key : {"rank", "environment", "slurm_job_id", "model_parameters", "train_samples", "test_samples",
                          "cluster_file", "link_rate_bps", "devices", "speed_of_light"})
    expected.insert(key);
  std::set<std::string> keys;
  for (const auto& [key, value] : written.items()) keys.insert(key);
  CHECK(keys == expected);
  std::vector<std::string> problems;
  const dtbench::run::RunRecord read = dtbench::run::readConfigJson(written, problems);
  CHECK(problems.empty());
  CHECK(read.settings.model == "lenet");
  CHECK(read.facts.modelParameters == 62006);
  REQUIRE(read.facts.devices.size() == 1);  // one rank: its CPU
  CHECK(read.facts.devices[0].type == "cpu");
  CHECK_FALSE(read.facts.devices[0].model.empty());
  // LeNet's FLOPs on the synthetic 3x32x32 images, measured against this CPU's GEMM probe.
  REQUIRE(read.facts.speedOfLight);
  CHECK(read.facts.speedOfLight->flops.training() == dtbench::models::countModelFlops("lenet").trainingFlops());
  REQUIRE(read.facts.speedOfLight->gemmProbe);
  CHECK(read.facts.speedOfLight->gemmProbe->gflops > 0);
}

TEST_CASE("phase timing changes no result, and none leaves the device phases empty", "[training][phase_timing]") {
  const TempDir tmp;
  using dtbench::run::PhaseTiming;
  std::vector<double> checksums;
  for (PhaseTiming timing : {PhaseTiming::kEvents, PhaseTiming::kSync, PhaseTiming::kNone}) {
    const std::string name = dtbench::run::phaseTimingNames().name(timing);
    const std::string out = tmp / name;
    RunConfig c = lenetOnSynthetic(out);
    c.maxSteps = 3;
    c.evaluate = false;
    c.gpu.phaseTiming = timing;
    const nlohmann::json summary = dtbench::run::summaryJson(dtbench::trainer::Trainer(c).run());
    REQUIRE(summary.at("status") == "completed");
    checksums.push_back(summary.at("param_checksum").get<double>());
    CHECK(readJson(out + "/config.json").at("phase_timing") == name);
    std::ifstream in(out + "/batches.csv");
    std::string line;
    std::getline(in, line);
    int rows = 0;
    while (std::getline(in, line)) {
      ++rows;
      std::vector<std::string> cells;
      std::stringstream fields(line);
      for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
      REQUIRE(cells.size() == 16);
      INFO(name << " row " << rows << ": " << line);
      CHECK_FALSE(cells[4].empty());  // data_s: the host's, always
      CHECK(std::stod(cells[11]) > 0);  // step_s
      for (int phase : {5, 6, 7, 10}) {  // h2d_s, forward_s, backward_s, optimizer_s
        if (timing == PhaseTiming::kNone) {
          CHECK(cells[phase].empty());
        } else {
          REQUIRE_FALSE(cells[phase].empty());
          CHECK(std::stod(cells[phase]) >= 0);
          CHECK(std::stod(cells[phase]) <= std::stod(cells[11]));
        }
      }
    }
    CHECK(rows == 6);  // every step of both epochs, each epoch's last included
    const nlohmann::json epoch = readJson(out + "/summary.json").at("epochs").at(0);
    CHECK(epoch.at("forward_s").is_null() == (timing == PhaseTiming::kNone));
    CHECK(epoch.at("data_s").is_number());
  }
  CHECK(checksums[0] == checksums[1]);
  CHECK(checksums[0] == checksums[2]);
}
