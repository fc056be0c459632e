#include "trainer/config.h"

#include <algorithm>
#include <sstream>

#include "data/download.h"
#include "dtbench/build_config.h"
#include "data/fashion_mnist.h"
#include "models/registry.h"

namespace dtbench::trainer {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::ostringstream out;
  for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
  return out.str();
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <typename T>
void require(bool ok, const std::string& flag, const std::string& rule, const T& got) {
  if (ok) return;
  std::ostringstream message;
  message << flag << " must be " << rule << ", got " << got;
  throw UsageError(message.str());
}

}  // namespace

void throwUnknownName(const std::string& what, const std::string& flag, const std::string& name,
                      const std::vector<std::string>& valid) {
  throw UsageError("unknown " + what + " '" + name + "' (" + flag + "); valid " + what + "s: " + joined(valid));
}

const std::vector<std::string>& datasetNames() {
  static const std::vector<std::string> names{"cifar10", "fashion-mnist", "synthetic"};
  return names;
}

const std::vector<std::string>& syncNames() {
  static const std::vector<std::string> names{"ssgd", "pairavg"};
  return names;
}

const std::vector<std::string>& ampNames() {
  static const std::vector<std::string> names{"off", "bf16", "fp16"};
  return names;
}

const std::vector<std::string>& optimizerNames() {
  static const std::vector<std::string> names{"sgd", "adam", "rmsprop"};
  return names;
}

RunConfig resolveDefaults(RunConfig config) {
  if (config.lr < 0) config.lr = config.optimizer == "adam" ? 1e-3 : config.optimizer == "rmsprop" ? 1e-3 : 0.1;
  if (config.momentum < 0) config.momentum = config.optimizer == "sgd" ? 0.9 : 0.0;
  if (config.dataDir.empty()) {
    if (config.dataset == "cifar10") config.dataDir = "data";
    if (config.dataset == "fashion-mnist") config.dataDir = data::kFashionMnistDefaultDir;
  }
  if (config.downloadUrl.empty()) config.downloadUrl = data::kCifar10Url;
  if (config.downloadMd5.empty()) config.downloadMd5 = data::kCifar10Md5;
  return config;
}

void validate(const RunConfig& config) {
  if (!models::isModelName(config.model)) throwUnknownName("model", "--model", config.model, models::modelNames());
  if (!contains(optimizerNames(), config.optimizer)) {
    throwUnknownName("optimizer", "--optimizer", config.optimizer, optimizerNames());
  }
  if (!contains(datasetNames(), config.dataset)) throwUnknownName("dataset", "--dataset", config.dataset, datasetNames());
  require(config.device == "cpu" || config.device == "cuda", "--device", "cpu or cuda", config.device);
  require(config.lr > 0, "--lr", "> 0", config.lr);
  require(config.momentum >= 0 && config.momentum < 1, "--momentum", "in [0, 1)", config.momentum);
  require(config.weightDecay >= 0, "--weight-decay", ">= 0", config.weightDecay);
  require(config.epochs >= 1, "--epochs", ">= 1", config.epochs);
  require(config.maxSteps >= 0, "--max-steps", ">= 0 (0 = whole epoch)", config.maxSteps);
  require(config.batchSize >= 1, "--batch-size", ">= 1", config.batchSize);
  require(config.testBatchSize >= 1, "--test-batch-size", ">= 1", config.testBatchSize);
  require(config.threads >= 0, "--threads", ">= 0 (0 = every available core)", config.threads);
  require(config.syntheticTrainSize >= 1, "--synthetic-train-size", ">= 1", config.syntheticTrainSize);
  require(config.syntheticTestSize >= 0, "--synthetic-test-size", ">= 0", config.syntheticTestSize);
  require(config.workers >= 0 && config.workers <= 64, "--workers", "in [0, 64] (0 = no prefetch threads)",
          config.workers);
  if (!contains(ampNames(), config.amp)) throwUnknownName("mixed-precision mode", "--amp", config.amp, ampNames());
  if (config.amp == "fp16" && config.device != "cuda")
    throw UsageError("--amp fp16 needs --device cuda: dtbench runs fp16 autocast on GPUs only (LibTorch 1.13 "
                     "has none on the CPU); use --amp bf16 on the CPU, or fp16 on a GPU");
  if (config.dataOnDevice && config.device != "cuda") {
    throw UsageError("--data-on-device needs a CUDA device: use it with --device cuda on a machine with a GPU");
  }
  if (config.download && config.dataset != "cifar10") {
    throw UsageError("--download fetches CIFAR-10 only (--dataset cifar10), got --dataset " + config.dataset +
                     (config.dataset == "fashion-mnist" ? "; install Debian's dataset-fashion-mnist instead" : ""));
  }
  const std::string& md5 = config.downloadMd5;
  require(md5.empty() || (md5.size() == 32 && md5.find_first_not_of("0123456789abcdef") == std::string::npos),
          "--download-md5", "32 lowercase hex digits", md5);
  if (config.outDir.empty()) throw UsageError("--out is required: the run directory to write");
  require(config.worldSize >= 1 && config.rank >= 0 && config.rank < config.worldSize, "the rank",
          "in [0, world size)", std::to_string(config.rank) + " of " + std::to_string(config.worldSize));
  if (!contains(syncNames(), config.sync)) throwUnknownName("synchronization", "--sync", config.sync, syncNames());
  require(config.mode == "ddp" || config.mode == "dp", "--mode", "ddp or dp", config.mode);
  require(config.bucketMb > 0, "--bucket-mb", "> 0", config.bucketMb);
  require(config.timeoutS > 0, "--timeout", "> 0 seconds", config.timeoutS);
  require(config.checkEvery >= 0, "--check-every", ">= 0 (0 = never)", config.checkEvery);
  require(config.checkpointEvery >= 0, "--checkpoint-every", ">= 0 (0 = only when preempted)", config.checkpointEvery);
  require(config.ranksPerHost >= 0, "--ranks-per-host", ">= 0 (0 = real host names)", config.ranksPerHost);
  require(config.glooThreads >= 1, "--gloo-threads", ">= 1", config.glooThreads);
  if (const std::string problem = comm::checkImpairment(impairmentOf(config)); !problem.empty()) throw UsageError(problem);
  if (impairmentOf(config).active() && config.sync == "ssgd" && config.topology == "native")
    throw UsageError("--inject-* acts in dtbench's own point-to-point layer, and with --topology native the backend "
                     "moves the bytes itself: pick a point-to-point topology (ring, tree, star, ...) or pairavg");
  if (config.checkEvery > 0 && config.sync != "ssgd")
    throw UsageError("--check-every compares parameters across ranks, which only --sync ssgd keeps identical");
  if (config.mode == "dp" && config.worldSize > 1)
    throw UsageError("--mode dp is one process driving every local GPU; start it once, not under a launcher with " +
                     std::to_string(config.worldSize) + " ranks");
  if (config.mode == "dp" && !DTBENCH_TORCH_HAS_CUDA)
    throw UsageError("--mode dp (single-process DataParallel over local GPUs): this build of LibTorch has no CUDA; "
                     "build dtbench against a CUDA LibTorch, or use one process per rank (dtbench launch)");
  if (config.mode == "dp" && config.device != "cuda")
    throw UsageError("--mode dp (single-process DataParallel) needs --device cuda and a CUDA build of LibTorch");
}

comm::Impairment impairmentOf(const RunConfig& config) {
  comm::Impairment impairment;
  impairment.delayMs = config.injectDelayMs;
  impairment.rateGbps = config.injectRateGbps;
  impairment.lossPercent = config.injectLossPct;
  impairment.rtoMs = config.injectRtoMs;
  impairment.seed = config.seed;
  return impairment;
}

nlohmann::json toJson(const RunConfig& config) {
  return {
      {"model", config.model},
      {"dataset", config.dataset},
      {"data_dir", config.dataDir},
      {"synthetic_train_size", config.syntheticTrainSize},
      {"synthetic_test_size", config.syntheticTestSize},
      {"device", config.device},
      {"workers", config.workers},
      {"data_on_device", config.dataOnDevice},
      {"download", config.download},
      {"download_url", config.downloadUrl},
      {"download_md5", config.downloadMd5},
      {"optimizer", config.optimizer},
      {"lr", config.lr},
      {"momentum", config.momentum},
      {"weight_decay", config.weightDecay},
      {"epochs", config.epochs},
      {"max_steps", config.maxSteps},
      {"batch_size", config.batchSize},
      {"test_batch_size", config.testBatchSize},
      {"drop_last", config.dropLast},
      {"evaluate", config.evaluate},
      {"seed", config.seed},
      {"threads", config.threads},
      {"amp", config.amp},
      {"channels_last", config.channelsLast},
      {"out", config.outDir},
      {"world_size", config.worldSize},
      {"backend", config.backend},
      {"topology", config.topology},
      {"ranks_per_host", config.ranksPerHost},
      {"gloo_iface", config.glooIface},
      {"gloo_threads", config.glooThreads},
      {"timeout_s", config.timeoutS},
      {"inject_delay_ms", config.injectDelayMs},
      {"inject_rate_gbps", config.injectRateGbps},
      {"inject_loss_pct", config.injectLossPct},
      {"inject_rto_ms", config.injectRtoMs},
      {"sync", config.sync},
      {"mode", config.mode},
      {"overlap", config.overlap},
      {"bucket_mb", config.bucketMb},
      {"local_bn_stats", config.localBnStats},
      {"check_every", config.checkEvery},
      {"timeline", config.timeline},
      {"checkpoint_every", config.checkpointEvery},
      {"command_line", config.commandLine},
  };
}

}  // namespace dtbench::trainer
