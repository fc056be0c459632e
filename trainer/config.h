#pragma once
// RunConfig: the one configuration of a training run. Parsed once from the command line
// (experiments/train_options.cpp), validated here, passed down by const reference, and written
// whole into the run directory's config.json. No other global or mutable configuration exists.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/impairment.h"

namespace dtbench::trainer {

// A value the user gave that cannot work. The message names the flag and says what is allowed;
// the command line exits with code 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct RunConfig {
  // What is trained, on what.
  std::string model = "resnet18";
  std::string dataset = "cifar10";  // cifar10 | fashion-mnist | synthetic
  std::string dataDir;  // "" = the dataset's default location (resolveDefaults)
  int64_t syntheticTrainSize = 50000;
  int64_t syntheticTestSize = 10000;
  std::string device = "cpu";  // cpu | cuda

  // Data loading (data/prefetch_loader.h, data/download.h).
  int64_t workers = 2;        // prefetch threads; 0 = batches built on the training thread
  bool dataOnDevice = false;  // keep the uint8 dataset on the GPU and augment there
  bool download = false;      // cifar10: fetch, verify and extract the archive when missing
  std::string downloadUrl;    // "" = the official URL (resolveDefaults)
  std::string downloadMd5;    // "" = the official archive's MD5 (resolveDefaults)

  // How.
  std::string optimizer = "sgd";  // sgd | adam | rmsprop
  double lr = -1.0;               // < 0: the optimizer's default (resolveDefaults)
  double momentum = -1.0;         // < 0: the optimizer's default
  double weightDecay = 5e-4;
  int64_t epochs = 1;
  int64_t maxSteps = 0;  // per epoch; 0 = the whole epoch
  int64_t batchSize = 128;
  int64_t testBatchSize = 100;
  bool dropLast = false;
  bool evaluate = true;  // test-set accuracy at every epoch end
  uint64_t seed = 0;
  int64_t threads = 0;  // intra-op threads; 0 = every core this process may run on
  std::string amp = "off";    // off | bf16 | fp16: autocast around forward and loss (trainer/precision.h);
                              // fp16 adds loss scaling (trainer/grad_scaler.h) and needs CUDA
  bool channelsLast = false;  // model and input batches in the channels-last (NHWC) memory format

  // Distribution (one process per rank; rank and world come from comm/rank_discovery.h).
  int rank = 0;
  int worldSize = 1;
  std::string masterAddr;  // gloo's TCPStore host (rank 0 serves it)
  int masterPort = 0;
  std::string storePath;   // gloo over a FileStore on a shared filesystem instead
  std::string backend = "gloo";     // gloo | mpi | nccl
  std::string topology = "native";  // comm/topology/topology.h's names
  int ranksPerHost = 0;             // 0: hosts from the real host names
  std::string glooIface;
  int glooThreads = 2;
  double timeoutS = 300;            // deadline of every collective (--timeout)
  double injectDelayMs = 0;         // --inject-*: network impairment in dtbench's point-to-point layer
  double injectRateGbps = 0;        //   (comm/impairment.h); 0 = none
  double injectLossPct = 0;
  double injectRtoMs = 200;
  std::string sync = "ssgd";        // ssgd | pairavg
  std::string mode = "ddp";         // ddp: one process per rank | dp: one process, several local GPUs
  bool overlap = true;              // ssgd: bucketed all-reduce launched during backward
  double bucketMb = 25;             // ssgd bucket cap (MiB); the first bucket is capped at 1 MiB
  bool localBnStats = false;        // keep BatchNorm running statistics local (no broadcast from rank 0)
  int64_t checkEvery = 0;           // ssgd: compare a parameter checksum across ranks every K steps
  bool timeline = false;            // write timeline.json (Chrome trace of every phase and bucket)
  int64_t checkpointEvery = 0;      // steps between checkpoints (0: only on preemption)
  bool resume = false;              // continue the run in outDir from its checkpoint

  // Where results go.
  std::string outDir;
  bool quiet = false;
  std::vector<std::string> commandLine;  // as typed, for config.json
};

// The --inject-* flags as the communication layer's Impairment (seeded by --seed).
comm::Impairment impairmentOf(const RunConfig& config);

const std::vector<std::string>& datasetNames();
const std::vector<std::string>& optimizerNames();
const std::vector<std::string>& syncNames();  // ssgd, pairavg
const std::vector<std::string>& ampNames();   // off, bf16, fp16

// Throws UsageError: "unknown <what> '<name>' (<flag>); valid <what>s: a, b, c".
[[noreturn]] void throwUnknownName(const std::string& what, const std::string& flag, const std::string& name,
                                   const std::vector<std::string>& valid);

// Fills the optimizer-dependent defaults: lr 0.1 / 1e-3 / 1e-3 and momentum 0.9 / - / 0 for
// sgd / adam / rmsprop; the dataset's default --data-dir (cifar10: "data", fashion-mnist:
// /usr/share/datasets/fashion-mnist, where Debian's dataset-fashion-mnist installs it); the
// official CIFAR-10 URL and MD5 for --download. Idempotent.
RunConfig resolveDefaults(RunConfig config);

// Throws UsageError naming the first flag whose value cannot work (batch 0, negative lr, unknown
// optimizer or dataset, missing --out, ...).
void validate(const RunConfig& config);

nlohmann::json toJson(const RunConfig& config);

}  // namespace dtbench::trainer
