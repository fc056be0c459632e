#include "trainer/trainer.h"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include "compat/torch_compat.h"
#include "data/prefetch_loader.h"
#include "models/registry.h"
#include "trainer/datasets.h"
#include "trainer/environment.h"
#include "trainer/epoch_stats.h"
#include "trainer/memory_policy.h"
#include "trainer/optimizer.h"
#include "trainer/phase_clock.h"
#include "trainer/progress.h"
#include "trainer/run_directory.h"

namespace dtbench::trainer {

struct Trainer::State {
  RunConfig config;
  torch::Device device{torch::kCPU};
  data::DatasetSplits data;
  models::ClassifierPtr model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::optional<data::PrefetchLoader> trainLoader;
  std::optional<data::PrefetchLoader> testLoader;
  std::optional<RunDirectory> dir;
  ProgressLine progress;
  nlohmann::json summary;
  std::vector<EpochStats> epochs;
  int64_t globalStep = 0;

  explicit State(const RunConfig& c) : config(resolveDefaults(c)), progress(c.quiet) {}

  StepRecord trainStep(int64_t epoch, int64_t step);
  void evaluate(EpochStats& stats);
  void writeSummary(const char* status, const std::string& error = "");
};

namespace {

torch::Device chooseDevice(const std::string& name) {
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw UsageError("--device cuda: this build of LibTorch has no CUDA or no GPU is visible; use --device cpu");
    }
    return torch::Device(torch::kCUDA, 0);
  }
  return torch::Device(torch::kCPU);
}

double parameterChecksum(const torch::nn::Module& model) {
  torch::NoGradGuard noGrad;
  double sum = 0;
  for (const auto& p : model.parameters()) sum += p.detach().to(torch::kDouble).sum().item<double>();
  return sum;
}

}  // namespace

Trainer::Trainer(const RunConfig& config) : state_(std::make_unique<State>(config)) {
  State& s = *state_;
  validate(s.config);
  const std::string memoryPolicy = applyMemoryPolicy();
  // Debian's LibTorch starts with one thread whatever the machine: 0 means every available core.
  at::set_num_threads(s.config.threads > 0 ? static_cast<int>(s.config.threads) : availableCores());
  if (s.config.dataOnDevice && !torch::cuda::is_available()) {
    throw UsageError("--data-on-device needs a CUDA device: this build of LibTorch has no CUDA or no GPU is visible");
  }
  s.device = chooseDevice(s.config.device);
  torch::manual_seed(s.config.seed);

  s.data = loadDatasets(s.config);
  if (s.config.dataOnDevice) moveToDevice(s.data, s.device);
  models::ModelOptions modelOptions;
  modelOptions.inputChannels = s.data.train.channels();
  modelOptions.numClasses = s.data.train.numClasses;
  s.model = models::makeModel(s.config.model, modelOptions);
  s.model->to(s.device);
  s.optimizer = makeOptimizer(s.config, s.model->parameters());

  data::LoaderOptions trainOptions;
  trainOptions.batchSize = s.config.batchSize;
  trainOptions.train = true;
  trainOptions.dropLast = s.config.dropLast;
  trainOptions.seed = s.config.seed;
  data::LoaderOptions testOptions;
  testOptions.batchSize = s.config.testBatchSize;
  testOptions.train = false;
  data::PrefetchOptions prefetch;
  prefetch.workers = s.config.workers;
  prefetch.pinMemory = s.device.is_cuda() && !s.config.dataOnDevice;  // for non-blocking copies
  s.trainLoader.emplace(s.data.train, trainOptions, prefetch);
  s.testLoader.emplace(s.data.test, testOptions, prefetch);

  s.dir.emplace(s.config.outDir);
  nlohmann::json configJson = toJson(s.config);
  configJson["world_size"] = 1;
  configJson["rank"] = 0;
  configJson["environment"] = describeEnvironment();
  configJson["environment"]["allocator"] = memoryPolicy;
  configJson["model_parameters"] = models::parameterStats(*s.model).parameters;
  configJson["train_samples"] = s.data.train.size();
  configJson["test_samples"] = s.data.test.size();
  s.dir->writeConfig(configJson);
  s.summary = {{"model", s.config.model},
               {"dataset", s.config.dataset},
               {"world_size", 1},
               {"batch_size", s.config.batchSize},
               {"started_at", unixSeconds()}};
  s.writeSummary("running");
}

Trainer::~Trainer() = default;

StepRecord Trainer::State::trainStep(int64_t epoch, int64_t step) {
  StepRecord r;
  r.epoch = epoch;
  r.step = step;
  PhaseClock clock(device);
  const auto stepStart = std::chrono::steady_clock::now();
  clock.start();

  std::optional<data::Batch> batch = trainLoader->next();
  TORCH_CHECK(batch.has_value(), "the loader ran out of batches at step ", step, " of epoch ", epoch);
  r.dataS = clock.lap();

  const torch::Tensor images = batch->images.to(device, /*non_blocking=*/true);
  const torch::Tensor labels = batch->labels.to(device, /*non_blocking=*/true);
  r.h2dS = clock.lap();

  const torch::Tensor logits = model->forward(images);
  const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, labels);
  r.forwardS = clock.lap();

  loss.backward();
  r.backwardS = clock.lap();

  optimizer->step();
  compat::zeroGradInPlace(*optimizer);
  r.optimizerS = clock.lap();

  r.samples = labels.size(0);
  r.loss = loss.item<double>();
  r.accuracy = logits.argmax(1).eq(labels).sum().item<double>() / static_cast<double>(r.samples);
  r.stepS = std::chrono::duration<double>(std::chrono::steady_clock::now() - stepStart).count();
  return r;
}

void Trainer::State::evaluate(EpochStats& stats) {
  if (!config.evaluate || data.test.size() == 0) return;
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard noGrad;
  model->eval();
  testLoader->startEpoch(stats.epoch);
  int64_t correct = 0;
  int64_t seen = 0;
  while (std::optional<data::Batch> batch = testLoader->next()) {
    const torch::Tensor logits = model->forward(batch->images.to(device));
    correct += logits.argmax(1).eq(batch->labels.to(device)).sum().item<int64_t>();
    seen += batch->labels.size(0);
  }
  model->train();
  stats.testAccuracy = static_cast<double>(correct) / static_cast<double>(seen);
  stats.evalS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Trainer::State::writeSummary(const char* status, const std::string& error) {
  summary["status"] = status;
  summary["updated_at"] = unixSeconds();
  nlohmann::json epochRows = nlohmann::json::array();
  for (const EpochStats& e : epochs) epochRows.push_back(toJson(e));
  summary["epochs"] = epochRows;
  if (!error.empty()) summary["error"] = error;
  dir->writeSummary(summary);
}

nlohmann::json Trainer::run() {
  State& s = *state_;
  try {
    const int64_t fullSteps = s.trainLoader->batchesPerEpoch();
    const int64_t steps = s.config.maxSteps > 0 ? std::min(s.config.maxSteps, fullSteps) : fullSteps;
    const int64_t totalSteps = steps * s.config.epochs;
    double elapsed = 0;
    s.model->train();
    for (int64_t epoch = 1; epoch <= s.config.epochs; ++epoch) {
      s.trainLoader->startEpoch(epoch);
      std::vector<StepRecord> records;
      records.reserve(static_cast<size_t>(steps));
      for (int64_t step = 1; step <= steps; ++step) {
        const StepRecord r = s.trainStep(epoch, step);
        records.push_back(r);
        ++s.globalStep;
        elapsed += r.stepS;
        s.dir->appendBatch(r);
        s.dir->appendHistory({unixSeconds(), "Batch", epoch, s.globalStep, r.loss, r.accuracy, r.samples / r.stepS});
        const double eta = elapsed / static_cast<double>(s.globalStep) * static_cast<double>(totalSteps - s.globalStep);
        s.progress.update(epoch, s.config.epochs, step, steps, r.loss, r.samples / r.stepS, eta);
      }
      EpochStats stats = addUp(epoch, fullSteps, records);
      s.progress.clear();
      s.evaluate(stats);
      s.dir->appendHistory({unixSeconds(), "Epoch", epoch, stats.steps, stats.meanLoss, stats.testAccuracy,
                            stats.imagesPerSec()});
      s.dir->flush();
      s.epochs.push_back(stats);
      s.writeSummary("running");
    }
    s.summary["param_checksum"] = parameterChecksum(*s.model);
    s.summary["finished_at"] = unixSeconds();
    s.writeSummary("completed");
    return s.summary;
  } catch (const std::exception& e) {
    s.progress.clear();
    try {
      s.dir->flush();
      s.writeSummary("failed", errorMessage(e));
    } catch (const std::exception&) {
      // The original error is the one to report; the directory may be what failed.
    }
    throw;
  }
}

}  // namespace dtbench::trainer
