#include "trainer/config.h"

#include <cmath>
#include <sstream>
#include <string>

#include "common/lists.h"
#include "common/usage_error.h"
#include "data/download.h"
#include "data/fashion_mnist.h"
#include "dtbench/build_config.h"
#include "models/registry.h"
#include "trainer/environment.h"

namespace dtbench::trainer {
namespace {

using common::UsageError;

template <typename T>
void require(bool ok, const std::string& flag, const std::string& rule, const T& got) {
  if (ok) return;
  std::ostringstream message;
  message << flag << " must be " << rule << ", got " << got;
  throw UsageError(message.str());
}

}  // namespace

const common::NamedValues<DatasetKind>& datasetNames() {
  static const common::NamedValues<DatasetKind> names({"dataset", "datasets"}, "--dataset",
                                                      {{DatasetKind::kCifar10, "cifar10"},
                                                       {DatasetKind::kFashionMnist, "fashion-mnist"},
                                                       {DatasetKind::kSynthetic, "synthetic"}});
  return names;
}

const common::NamedValues<DeviceKind>& deviceNames() {
  static const common::NamedValues<DeviceKind> names("--device",
                                                     {{DeviceKind::kCpu, "cpu"}, {DeviceKind::kCuda, "cuda"}});
  return names;
}

const common::NamedValues<OptimizerKind>& optimizerNames() {
  static const common::NamedValues<OptimizerKind> names({"optimizer", "optimizers"}, "--optimizer",
                                                        {{OptimizerKind::kSgd, "sgd"},
                                                         {OptimizerKind::kAdam, "adam"},
                                                         {OptimizerKind::kRmsprop, "rmsprop"}});
  return names;
}

const common::NamedValues<Amp>& ampNames() {
  static const common::NamedValues<Amp> names({"mixed-precision mode", "mixed-precision modes"}, "--amp",
                                              {{Amp::kOff, "off"}, {Amp::kBf16, "bf16"}, {Amp::kFp16, "fp16"}});
  return names;
}

const common::NamedValues<Sync>& syncNames() {
  static const common::NamedValues<Sync> names({"synchronization", "synchronizations"}, "--sync",
                                               {{Sync::kSsgd, "ssgd"}, {Sync::kPairavg, "pairavg"}});
  return names;
}

const common::NamedValues<ParallelMode>& modeNames() {
  static const common::NamedValues<ParallelMode> names("--mode",
                                                       {{ParallelMode::kDdp, "ddp"}, {ParallelMode::kDp, "dp"}});
  return names;
}

RunConfig resolveDefaults(RunConfig config) {
  OptimizerConfig& o = config.optimizer;
  if (o.lr < 0) o.lr = o.kind == OptimizerKind::kSgd ? 0.1 : 1e-3;
  if (o.momentum < 0) o.momentum = o.kind == OptimizerKind::kSgd ? 0.9 : 0.0;
  DataConfig& d = config.data;
  if (d.dir.empty()) {
    if (d.dataset == DatasetKind::kCifar10) d.dir = "data";
    if (d.dataset == DatasetKind::kFashionMnist) d.dir = data::kFashionMnistDefaultDir;
  }
  if (d.downloadUrl.empty()) d.downloadUrl = data::kCifar10Url;
  if (d.downloadMd5.empty()) d.downloadMd5 = data::kCifar10Md5;
  config.impairment.seed = config.seed;
  return config;
}

void validate(const RunConfig& config) {
  const DataConfig& d = config.data;
  const OptimizerConfig& o = config.optimizer;
  const bool cuda = config.device == DeviceKind::kCuda;
  if (!models::isModelName(config.model))
    throw UsageError("unknown model '" + config.model +
                     "' (--model); valid models: " + common::joinList(models::modelNames()));
  // NaN fails every comparison and inf passes "> 0": both are refused by name.
  require(o.lr > 0 && std::isfinite(o.lr), "--lr", "a finite number > 0", o.lr);
  require(o.momentum >= 0 && o.momentum < 1, "--momentum", "in [0, 1)", o.momentum);
  require(o.weightDecay >= 0 && std::isfinite(o.weightDecay), "--weight-decay", "a finite number >= 0", o.weightDecay);
  require(config.epochs >= 1, "--epochs", ">= 1", config.epochs);
  require(config.maxSteps >= 0, "--max-steps", ">= 0 (0 = whole epoch)", config.maxSteps);
  require(d.batchSize >= 1, "--batch-size", ">= 1", d.batchSize);
  require(d.testBatchSize >= 1, "--test-batch-size", ">= 1", d.testBatchSize);
  // More intra-op threads than cores only contend for them; 100000 would hang starting them.
  const int cores = availableCores();
  require(config.threads >= 0 && config.threads <= cores, "--threads",
          "in [0, " + std::to_string(cores) + "], the cores this process may run on (0 = all of them)", config.threads);
  require(d.syntheticTrainSize >= 1, "--synthetic-train-size", ">= 1", d.syntheticTrainSize);
  require(d.syntheticTestSize >= 0, "--synthetic-test-size", ">= 0", d.syntheticTestSize);
  require(d.workers >= 0 && d.workers <= 64, "--workers", "in [0, 64] (0 = no prefetch threads)", d.workers);
  if (config.precision.amp == Amp::kFp16 && !cuda)
    throw UsageError(
        "--amp fp16 needs --device cuda: dtbench runs fp16 autocast with loss scaling on GPUs only; "
        "use --amp bf16 on the CPU, or fp16 on a GPU");
  if (d.onDevice && !cuda)
    throw UsageError("--data-on-device needs a CUDA device: use it with --device cuda on a machine with a GPU");
  if (d.download && d.dataset != DatasetKind::kCifar10)
    throw UsageError(
        "--download fetches CIFAR-10 only (--dataset cifar10), got --dataset " +
        std::string(datasetNames().name(d.dataset)) +
        (d.dataset == DatasetKind::kFashionMnist ? "; install Debian's dataset-fashion-mnist instead" : ""));
  const std::string& md5 = d.downloadMd5;
  require(md5.empty() || (md5.size() == 32 && md5.find_first_not_of("0123456789abcdef") == std::string::npos),
          "--download-md5", "32 lowercase hex digits", md5);
  if (config.outDir.empty()) throw UsageError("--out is required: the run directory to write");
  require(config.worldSize() >= 1 && config.rank() >= 0 && config.rank() < config.worldSize(), "the rank",
          "in [0, world size)", std::to_string(config.rank()) + " of " + std::to_string(config.worldSize()));
  require(config.sync.bucketMb > 0 && std::isfinite(config.sync.bucketMb), "--bucket-mb", "a finite number > 0",
          config.sync.bucketMb);
  require(config.comm.connection.timeoutS > 0 && std::isfinite(config.comm.connection.timeoutS), "--timeout",
          "a finite number > 0 (seconds)", config.comm.connection.timeoutS);
  require(config.sync.checkEvery >= 0, "--check-every", ">= 0 (0 = never)", config.sync.checkEvery);
  require(config.checkpointEvery >= 0, "--checkpoint-every", ">= 0 (0 = only when preempted)", config.checkpointEvery);
  require(config.comm.ranksPerHost >= 0, "--ranks-per-host", ">= 0 (0 = real host names)", config.comm.ranksPerHost);
  require(config.comm.connection.glooThreads >= 1, "--gloo-threads", ">= 1", config.comm.connection.glooThreads);
  if (const std::string problem = comm::checkImpairment(config.impairment); !problem.empty()) throw UsageError(problem);
  if (config.impairment.active() && config.sync.kind == Sync::kSsgd && config.comm.topology.native())
    throw UsageError(
        "--inject-* acts in dtbench's own point-to-point layer, and with --topology native the backend "
        "moves the bytes itself: pick a point-to-point topology (ring, tree, star, ...) or pairavg");
  if (config.sync.checkEvery > 0 && config.sync.kind != Sync::kSsgd)
    throw UsageError("--check-every compares parameters across ranks, which only --sync ssgd keeps identical");
  const comm::Backend backend = config.comm.connection.backend;
  if (backend == comm::Backend::kNccl && !cuda)
    throw UsageError("--backend nccl communicates between GPUs: use it with --device cuda (or --backend gloo or mpi "
                     "with --device cpu)");
  comm::checkBackendRunsTopology(
      backend, config.sync.kind == Sync::kPairavg ? "--sync pairavg" : "--topology " + config.comm.topology.name(),
      config.sync.kind == Sync::kPairavg || !config.comm.topology.native());
  if (config.mode == ParallelMode::kDp && config.worldSize() > 1)
    throw UsageError("--mode dp is one process driving every local GPU; start it once, not under a launcher with " +
                     std::to_string(config.worldSize()) + " ranks");
  if (config.mode == ParallelMode::kDp && !DTBENCH_TORCH_HAS_CUDA)
    throw UsageError(
        "--mode dp (single-process DataParallel over local GPUs): this build of LibTorch has no CUDA; "
        "build dtbench against a CUDA LibTorch, or use one process per rank (dtbench launch)");
  if (config.mode == ParallelMode::kDp && !cuda)
    throw UsageError("--mode dp (single-process DataParallel) needs --device cuda and a CUDA build of LibTorch");
}

}  // namespace dtbench::trainer
