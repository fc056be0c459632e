#include "experiments/train_options.h"

#include <algorithm>
#include <cctype>

#include <cxxopts.hpp>

#include "data/download.h"
#include "experiments/rank_options.h"
#include "data/fashion_mnist.h"
#include "models/registry.h"

namespace dtbench::experiments {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

TrainCommandLine parseTrainOptions(const std::vector<std::string>& args, const comm::Environment& env) {
  trainer::RunConfig d;  // defaults
  cxxopts::Options options("dtbench train", "Train one model, one process per rank (data-parallel), and write a run directory (rank 0 writes it).");
  options.set_width(100);
  // clang-format off
  options.add_options("Model and data")
    ("model", "Model: " + joined(models::modelNames()), cxxopts::value<std::string>()->default_value(d.model))
    ("dataset", "Dataset: " + joined(trainer::datasetNames()) +
     " (fashion-mnist: 28x28 zero-padded to 32x32, 1 channel; training batches of every dataset get a random "
     "crop with padding 4 and a horizontal flip)", cxxopts::value<std::string>()->default_value(d.dataset))
    ("data-dir", "Where the dataset lives (default: the dataset's own place; cifar10: data, the folder holding "
     "cifar-10-batches-bin/; fashion-mnist: " + std::string(data::kFashionMnistDefaultDir) +
     ", where Debian's dataset-fashion-mnist installs its IDX files)",
     cxxopts::value<std::string>())
    ("synthetic-train-size", "Training images of --dataset synthetic",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.syntheticTrainSize)))
    ("synthetic-test-size", "Test images of --dataset synthetic",
     cxxopts::value<int64_t>()->default_value(std::to_string(d.syntheticTestSize)))
    ("device", "cpu or cuda", cxxopts::value<std::string>()->default_value(d.device));
  options.add_options("Data loading")
    ("workers", "Threads that build batches ahead of the training step (0: built on the training thread); "
     "batches are bit-identical for any count", cxxopts::value<int64_t>()->default_value(std::to_string(d.workers)))
    ("data-on-device", "Keep the uint8 dataset on the GPU and augment batches there (needs --device cuda)")
    ("download", "cifar10: download, MD5-check and extract cifar-10-binary.tar.gz into --data-dir when missing")
    ("download-url", "Mirror of cifar-10-binary.tar.gz for --download",
     cxxopts::value<std::string>()->default_value(data::kCifar10Url))
    ("download-md5", "Expected MD5 of the --download archive",
     cxxopts::value<std::string>()->default_value(data::kCifar10Md5));
  options.add_options("Optimization")
    ("optimizer", "Optimizer: " + joined(trainer::optimizerNames()),
     cxxopts::value<std::string>()->default_value(d.optimizer))
    ("lr", "Learning rate (default: 0.1 sgd, 0.001 adam and rmsprop)", cxxopts::value<double>())
    ("momentum", "Momentum of sgd and rmsprop (default: 0.9 sgd, 0 rmsprop)", cxxopts::value<double>())
    ("weight-decay", "Weight decay", cxxopts::value<double>()->default_value("5e-4"))
    ("epochs", "Epochs", cxxopts::value<int64_t>()->default_value(std::to_string(d.epochs)))
    ("max-steps", "Steps per epoch at most (0: the whole epoch); a cut epoch is reported as extrapolated",
     cxxopts::value<int64_t>()->default_value("0"))
    ("batch-size", "Training batch size (per rank)", cxxopts::value<int64_t>()->default_value(std::to_string(d.batchSize)))
    ("test-batch-size", "Evaluation batch size", cxxopts::value<int64_t>()->default_value(std::to_string(d.testBatchSize)))
    ("drop-last", "Drop the last incomplete training batch")
    ("no-eval", "Skip the test-set evaluation at each epoch end")
    ("seed", "Seed of initialization, shuffle and augmentation", cxxopts::value<uint64_t>()->default_value("0"))
    ("threads", "Intra-op threads (0: every core this process may run on)", cxxopts::value<int64_t>()->default_value("0"));
  options.add_options("Precision and memory layout")
    ("amp", "Automatic mixed precision around forward and loss: off, bf16 (CPU or GPU) or fp16 (GPU only, with "
     "dynamic loss scaling); parameters, gradients and the all-reduce stay fp32",
     cxxopts::value<std::string>()->default_value(d.amp))
    ("channels-last", "Model and input batches in the channels-last (NHWC) memory format");
  options.add_options("Distributed training (one process per rank: dtbench launch, mpirun or srun)")
    ("backend", "gloo, mpi or nccl", cxxopts::value<std::string>()->default_value(d.backend))
    ("topology", "All-reduce algorithm: native (the backend's own), ring, tree, binary-tree-star, star, clique, "
     "hierarchical", cxxopts::value<std::string>()->default_value(d.topology))
    ("sync", "ssgd: gradients averaged over all ranks every step; pairavg: each step a seeded perfect matching "
     "pairs the ranks and each pair averages parameters", cxxopts::value<std::string>()->default_value(d.sync))
    ("no-overlap", "ssgd: one fused all-reduce after backward instead of buckets launched during backward")
    ("bucket-mb", "ssgd: bucket cap in MiB (the first bucket is capped at 1 MiB)",
     cxxopts::value<double>()->default_value("25"))
    ("local-bn-stats", "Keep BatchNorm running statistics local instead of broadcasting rank 0's every step")
    ("check-every", "ssgd: every K steps verify that all ranks hold identical parameters (0: never)",
     cxxopts::value<int64_t>()->default_value("0"))
    ("mode", "ddp: one process per rank; dp: one process driving every local GPU (DataParallel, CUDA only)",
     cxxopts::value<std::string>()->default_value(d.mode))
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

  std::vector<const char*> argv{"dtbench train"};
  for (const auto& a : args) argv.push_back(a.c_str());
  TrainCommandLine result;
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
    if (!parsed.unmatched().empty()) {
      throw trainer::UsageError("unexpected argument '" + parsed.unmatched().front() + "'; see dtbench train --help");
    }
    if (parsed.count("help")) {
      result.help = true;
      result.helpText = options.help();
      return result;
    }
    trainer::RunConfig& c = result.config;
    c.model = parsed["model"].as<std::string>();
    c.dataset = parsed["dataset"].as<std::string>();
    if (parsed.count("data-dir")) c.dataDir = parsed["data-dir"].as<std::string>();
    c.syntheticTrainSize = parsed["synthetic-train-size"].as<int64_t>();
    c.syntheticTestSize = parsed["synthetic-test-size"].as<int64_t>();
    c.device = parsed["device"].as<std::string>();
    c.workers = parsed["workers"].as<int64_t>();
    c.dataOnDevice = parsed.count("data-on-device") > 0;
    c.download = parsed.count("download") > 0;
    c.downloadUrl = parsed["download-url"].as<std::string>();
    c.downloadMd5 = parsed["download-md5"].as<std::string>();
    std::transform(c.downloadMd5.begin(), c.downloadMd5.end(), c.downloadMd5.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    c.optimizer = parsed["optimizer"].as<std::string>();
    if (parsed.count("lr")) c.lr = parsed["lr"].as<double>();
    if (parsed.count("momentum")) c.momentum = parsed["momentum"].as<double>();
    c.weightDecay = parsed["weight-decay"].as<double>();
    c.epochs = parsed["epochs"].as<int64_t>();
    c.maxSteps = parsed["max-steps"].as<int64_t>();
    c.batchSize = parsed["batch-size"].as<int64_t>();
    c.testBatchSize = parsed["test-batch-size"].as<int64_t>();
    c.dropLast = parsed.count("drop-last") > 0;
    c.evaluate = parsed.count("no-eval") == 0;
    c.seed = parsed["seed"].as<uint64_t>();
    c.threads = parsed["threads"].as<int64_t>();
    c.amp = parsed["amp"].as<std::string>();
    c.channelsLast = parsed.count("channels-last") > 0;
    if (parsed.count("out")) c.outDir = parsed["out"].as<std::string>();
    c.quiet = parsed.count("quiet") > 0;
    c.backend = parsed["backend"].as<std::string>();
    c.topology = parsed["topology"].as<std::string>();
    c.sync = parsed["sync"].as<std::string>();
    c.overlap = parsed.count("no-overlap") == 0;
    c.bucketMb = parsed["bucket-mb"].as<double>();
    c.localBnStats = parsed.count("local-bn-stats") > 0;
    c.checkEvery = parsed["check-every"].as<int64_t>();
    c.mode = parsed["mode"].as<std::string>();
    c.injectDelayMs = parsed["inject-delay-ms"].as<double>();
    c.injectRateGbps = parsed["inject-rate-gbps"].as<double>();
    c.injectLossPct = parsed["inject-loss-pct"].as<double>();
    c.injectRtoMs = parsed["inject-rto-ms"].as<double>();
    c.timeline = parsed.count("timeline") > 0;
    c.checkpointEvery = parsed["checkpoint-every"].as<int64_t>();
    c.resume = parsed.count("resume") > 0;
    const RankFlags flags = readRankOptions(parsed, env);
    const comm::RankInfo who = discoverRankOrExplain(flags, env);
    c.rank = who.rank;
    c.worldSize = who.worldSize;
    c.masterAddr = who.masterAddr;
    c.masterPort = who.masterPort;
    c.storePath = flags.storePath;
    c.glooIface = flags.glooIface;
    c.glooThreads = flags.glooThreads;
    c.ranksPerHost = flags.ranksPerHost;
    c.timeoutS = flags.timeoutS;
    c.commandLine.assign(args.begin(), args.end());
    c.commandLine.insert(c.commandLine.begin(), {"dtbench", "train"});
  } catch (const cxxopts::exceptions::exception& e) {
    throw trainer::UsageError(std::string(e.what()) + "; see dtbench train --help");
  }
  // An explicit lr or momentum is checked as given; only absent ones get defaults.
  if (parsed.count("lr") && result.config.lr <= 0) {
    throw trainer::UsageError("--lr must be > 0, got " + std::to_string(result.config.lr));
  }
  if (parsed.count("momentum") && result.config.momentum < 0) {
    throw trainer::UsageError("--momentum must be in [0, 1), got " + std::to_string(result.config.momentum));
  }
  result.config = trainer::resolveDefaults(result.config);
  trainer::validate(result.config);
  return result;
}

}  // namespace dtbench::experiments
