#include "experiments/cli/train_options.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <cxxopts.hpp>

#include "comm/backends/backend.h"
#include "comm/backends/make_communicator.h"
#include "comm/impairment/impairment.h"
#include "comm/topology/registry.h"
#include "common/cluster_file.h"
#include "common/lists.h"
#include "common/named_values.h"
#include "common/usage_error.h"
#include "data/download.h"
#include "data/fashion_mnist.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/rank_options.h"
#include "models/registry.h"

namespace dtbench::experiments {

namespace {

// Every flag of dtbench train, with its help and default.
cxxopts::Options trainOptions() {
  using namespace trainer;
  const RunConfig d;  // defaults
  cxxopts::Options options(
      "dtbench train",
      "Train one model, one process per rank (data-parallel), and write a run directory (rank 0 writes it).");
  options.set_width(100);
  // clang-format off
  options.add_options("Model and data")
    ("model", "Model: " + common::joinList(models::modelNames()), cxxopts::value<std::string>()->default_value(d.model))
    ("dataset", "Dataset: " + datasetNames().joined() +
     " (fashion-mnist: 28x28 zero-padded to 32x32, 1 channel; training batches of every dataset get a random "
     "crop with padding 4 and a horizontal flip)",
     cxxopts::value<std::string>()->default_value(datasetNames().name(d.data.dataset)))
    ("data-dir", "Where the dataset lives (default: the dataset's own place; cifar10: data, the folder holding "
     "cifar-10-batches-bin/; fashion-mnist: " + std::string(data::kFashionMnistDefaultDir) +
     ", where Debian's dataset-fashion-mnist installs its IDX files)",
     cxxopts::value<std::string>())
    ("synthetic-train-size", "Training images of --dataset synthetic",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.data.syntheticTrainSize)))
    ("synthetic-test-size", "Test images of --dataset synthetic",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.data.syntheticTestSize)))
    ("device", deviceNames().joined(", ", " or "),
     cxxopts::value<std::string>()->default_value(deviceNames().name(d.device)));
  options.add_options("Data loading")
    ("workers", "Threads that build batches ahead of the training step (0: built on the training thread); "
     "batches are bit-identical for any count",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.data.workers)))
    ("data-on-device", "Keep the uint8 dataset on the GPU and augment batches there (needs --device cuda)")
    ("download", "cifar10: download, MD5-check and extract cifar-10-binary.tar.gz into --data-dir when missing")
    ("download-url", "Mirror of cifar-10-binary.tar.gz for --download",
     cxxopts::value<std::string>()->default_value(data::kCifar10Url))
    ("download-md5", "Expected MD5 of the --download archive",
     cxxopts::value<std::string>()->default_value(data::kCifar10Md5));
  options.add_options("Optimization")
    ("optimizer", "Optimizer: " + optimizerNames().joined(),
     cxxopts::value<std::string>()->default_value(optimizerNames().name(d.optimizer.kind)))
    ("lr", "Learning rate (default: 0.1 sgd, 0.001 adam and rmsprop)", cxxopts::value<double>())
    ("momentum", "Momentum of sgd and rmsprop (default: 0.9 sgd, 0 rmsprop)", cxxopts::value<double>())
    ("weight-decay", "Weight decay", cxxopts::value<double>()->default_value("5e-4"))
    ("epochs", "Epochs", cxxopts::value<int64_t>()->default_value(std::to_string(d.epochs)))
    ("max-steps", "Steps per epoch at most (0: the whole epoch); a cut epoch is reported as extrapolated",
     cxxopts::value<int64_t>()->default_value("0"))
    ("batch-size", "Training batch size (per rank)",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.data.batchSize)))
    ("test-batch-size", "Evaluation batch size",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.data.testBatchSize)))
    ("drop-last", "Drop the last incomplete training batch")
    ("no-eval", "Skip the test-set evaluation at each epoch end")
    ("seed", "Seed of initialization, shuffle and augmentation", cxxopts::value<uint64_t>()->default_value("0"))
    ("threads", "Intra-op threads (0: every core this process may run on; at most that many)",
     cxxopts::value<int64_t>()->default_value("0"));
  options.add_options("Precision and memory layout")
    ("amp", "Automatic mixed precision around forward and loss: off, bf16 (CPU or GPU) or fp16 (GPU only, with "
     "dynamic loss scaling); parameters, gradients and the all-reduce stay fp32",
     cxxopts::value<std::string>()->default_value(ampNames().name(d.precision.amp)))
    ("channels-last", "Model and input batches in the channels-last (NHWC) memory format");
  options.add_options("Distributed training (one process per rank: dtbench launch, mpirun or srun)")
    ("backend", comm::backendNames().joined(", ", " or "),
     cxxopts::value<std::string>()->default_value(comm::name(d.comm.connection.backend)))
    ("topology", "All-reduce algorithm: " + comm::topologyHelp(),
     cxxopts::value<std::string>()->default_value(d.comm.topology.name()))
    ("sync", "ssgd: gradients averaged over all ranks every step; pairavg: each step a seeded perfect matching "
     "pairs the ranks and each pair averages parameters",
     cxxopts::value<std::string>()->default_value(syncNames().name(d.sync.kind)))
    ("no-overlap", "ssgd: one fused all-reduce after backward instead of buckets launched during backward")
    ("bucket-mb", "ssgd: bucket cap in MiB (the first bucket is capped at 1 MiB)",
     cxxopts::value<double>()->default_value("25"))
    ("local-bn-stats", "Keep BatchNorm running statistics local instead of broadcasting rank 0's every step")
    ("check-every", "ssgd: every K steps verify that all ranks hold identical parameters (0: never)",
     cxxopts::value<int64_t>()->default_value("0"))
    ("mode", "ddp: one process per rank; dp: one process driving every local GPU (DataParallel, CUDA only)",
     cxxopts::value<std::string>()->default_value(modeNames().name(d.mode)))
    ("inject-delay-ms", "Hold every message dtbench sends point-to-point this long (emulated latency; not with "
     "--topology native)", cxxopts::value<double>()->default_value("0"))
    ("inject-rate-gbps", "Hold every message for bytes / rate (emulated link rate, Gbit/s; 0: none)",
     cxxopts::value<double>()->default_value("0"))
    ("inject-loss-pct", "Emulated TCP segment loss: each lost 1448-byte segment holds its message --inject-rto-ms",
     cxxopts::value<double>()->default_value("0"))
    ("inject-rto-ms", "Cost of one lost segment (a retransmission timeout)", cxxopts::value<double>()->default_value("200"));
  options.add_options("Output")
    ("out", "Run directory to create (must not hold a run already)", cxxopts::value<std::string>())
    ("timeline", "Write timeline.json, a Chrome trace of every phase and bucket of every rank")
    ("checkpoint-every", "Write a checkpoint every K steps and at every epoch end (0: only when preempted by SIGTERM)",
     cxxopts::value<int64_t>()->default_value("0"))
    ("resume", "Continue the interrupted run in --out from its checkpoint (same flags as the run)")
    ("quiet", "No progress line on stderr")
    ("h,help", "Show this help");
  // clang-format on
  addRankOptions(options, 300);
  return options;
}

}  // namespace

ValueKind trainFlagKind(const std::string& name) {
  cxxopts::Options options = trainOptions();
  return valueKind(options, "--" + name);
}

TrainCommandLine parseTrainOptions(const std::vector<std::string>& args, const comm::Environment& env) {
  using namespace trainer;
  cxxopts::Options options = trainOptions();
  const ParsedOptions parsed = parseOptions(options, "train", args);
  TrainCommandLine result;
  if (parsed.help) {
    result.help = true;
    result.helpText = parsed.helpText;
    return result;
  }
  const cxxopts::ParseResult& p = parsed.result;
  RunConfig& c = result.config;
  try {
    c.model = p["model"].as<std::string>();
    c.device = deviceNames().parse(p["device"].as<std::string>());
    c.mode = modeNames().parse(p["mode"].as<std::string>());
    c.epochs = p["epochs"].as<int64_t>();
    c.maxSteps = p["max-steps"].as<int64_t>();
    c.evaluate = p.count("no-eval") == 0;
    c.seed = p["seed"].as<uint64_t>();
    c.threads = p["threads"].as<int64_t>();

    DataConfig& data = c.data;
    data.dataset = datasetNames().parse(p["dataset"].as<std::string>());
    if (p.count("data-dir")) data.dir = p["data-dir"].as<std::string>();
    data.syntheticTrainSize = p["synthetic-train-size"].as<int64_t>();
    data.syntheticTestSize = p["synthetic-test-size"].as<int64_t>();
    data.batchSize = p["batch-size"].as<int64_t>();
    data.testBatchSize = p["test-batch-size"].as<int64_t>();
    data.dropLast = p.count("drop-last") > 0;
    data.workers = p["workers"].as<int64_t>();
    data.onDevice = p.count("data-on-device") > 0;
    data.download = p.count("download") > 0;
    data.downloadUrl = p["download-url"].as<std::string>();
    data.downloadMd5 = p["download-md5"].as<std::string>();
    std::transform(data.downloadMd5.begin(), data.downloadMd5.end(), data.downloadMd5.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });

    OptimizerConfig& optimizer = c.optimizer;
    optimizer.kind = optimizerNames().parse(p["optimizer"].as<std::string>());
    if (p.count("lr")) optimizer.lr = p["lr"].as<double>();
    if (p.count("momentum")) optimizer.momentum = p["momentum"].as<double>();
    optimizer.weightDecay = p["weight-decay"].as<double>();

    c.precision.amp = ampNames().parse(p["amp"].as<std::string>());
    c.precision.channelsLast = p.count("channels-last") > 0;

    const RankOptions ranks = readRankOptions(p, env, comm::backendNames().parse(p["backend"].as<std::string>()));
    c.comm.connection = ranks.connection;
    c.comm.ranksPerHost = ranks.ranksPerHost;
    c.comm.topology = comm::Topology::parse(p["topology"].as<std::string>());

    c.sync.kind = syncNames().parse(p["sync"].as<std::string>());
    c.sync.overlap = p.count("no-overlap") == 0;
    c.sync.bucketMb = p["bucket-mb"].as<double>();
    c.sync.localBnStats = p.count("local-bn-stats") > 0;
    c.sync.checkEvery = p["check-every"].as<int64_t>();

    c.impairment.delayMs = p["inject-delay-ms"].as<double>();
    c.impairment.rateGbps = p["inject-rate-gbps"].as<double>();
    c.impairment.lossPercent = p["inject-loss-pct"].as<double>();
    c.impairment.rtoMs = p["inject-rto-ms"].as<double>();

    if (p.count("out")) c.outDir = p["out"].as<std::string>();
    c.timeline = p.count("timeline") > 0;
    c.checkpointEvery = p["checkpoint-every"].as<int64_t>();
    c.resume = p.count("resume") > 0;
    c.quiet = p.count("quiet") > 0;
    c.commandLine.assign(args.begin(), args.end());
    c.commandLine.insert(c.commandLine.begin(), {"dtbench", "train"});
  } catch (const cxxopts::exceptions::exception& e) {
    throwUsage("train", e.what());
  }
  // An explicit lr or momentum is checked as given; only absent ones get defaults.
  if (p.count("lr") && c.optimizer.lr <= 0)
    throw common::UsageError("--lr must be > 0, got " + std::to_string(c.optimizer.lr));
  if (p.count("momentum") && c.optimizer.momentum < 0)
    throw common::UsageError("--momentum must be in [0, 1), got " + std::to_string(c.optimizer.momentum));
  c = resolveDefaults(c);
  validate(c);
  // A DTBENCH_CLUSTER that names a bad file is refused here, on every rank, before any run directory
  // is opened (config.json reads it again for the run's hosts, common/cluster_file.h).
  if (const char* cluster = std::getenv(common::kClusterVariable); cluster && *cluster) {
    try {
      common::readClusterFile(cluster);
    } catch (const std::runtime_error& e) {
      throw common::UsageError(std::string(common::kClusterVariable) + ": " + e.what() +
                               " (unset it to run off the emulated cluster, or point it at the cluster.json that "
                               "experiments/cluster/cluster.sh up wrote)");
    }
  }
  return result;
}

}  // namespace dtbench::experiments
