#pragma once
// RunConfig: the one configuration of a training run, nested by concern: what is trained, the data
// and its loading, the optimizer, the precision, how the rank connects to the others (comm), how the
// ranks are kept together (sync) and the injected network impairment. Parsed once from the command
// line (experiments/cli/train_options.cpp), where every closed set of names becomes an enum: text
// appears again only in config.json (trainer/config_json.h). Passed down by const reference; no
// other global or mutable configuration exists.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/backends/make_communicator.h"
#include "comm/impairment/impairment.h"
#include "comm/topology/registry.h"
#include "common/named_values.h"
#include "common/usage_error.h"

namespace dtbench::trainer {

enum class DatasetKind { kCifar10, kFashionMnist, kSynthetic };
enum class DeviceKind { kCpu, kCuda };
enum class OptimizerKind { kSgd, kAdam, kRmsprop };
enum class Amp { kOff, kBf16, kFp16 };  // autocast's type: none, bfloat16, float16
enum class Sync { kSsgd, kPairavg };
enum class ParallelMode { kDdp, kDp };  // ddp: one process per rank; dp: one process, several local GPUs

// The flags' names of each set; parse() throws common::UsageError naming the flag and the valid names.
const common::NamedValues<DatasetKind>& datasetNames();      // cifar10 fashion-mnist synthetic
const common::NamedValues<DeviceKind>& deviceNames();        // cpu cuda
const common::NamedValues<OptimizerKind>& optimizerNames();  // sgd adam rmsprop
const common::NamedValues<Amp>& ampNames();                  // off bf16 fp16
const common::NamedValues<Sync>& syncNames();                // ssgd pairavg
const common::NamedValues<ParallelMode>& modeNames();        // ddp dp

struct DataConfig {
  DatasetKind dataset = DatasetKind::kCifar10;
  std::string dir;  // "" = the dataset's default location (resolveDefaults)
  int64_t syntheticTrainSize = 50000;
  int64_t syntheticTestSize = 10000;
  int64_t batchSize = 128;  // per rank
  int64_t testBatchSize = 100;
  bool dropLast = false;
  // Loading (data/prefetch_loader.h, data/download.h).
  int64_t workers = 2;      // prefetch threads; 0 = batches built on the training thread
  bool onDevice = false;    // keep the uint8 dataset on the GPU and augment there
  bool download = false;    // cifar10: fetch, verify and extract the archive when missing
  std::string downloadUrl;  // "" = the official URL (resolveDefaults)
  std::string downloadMd5;  // "" = the official archive's MD5 (resolveDefaults)
};

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = -1.0;        // < 0: the optimizer's default (resolveDefaults)
  double momentum = -1.0;  // < 0: the optimizer's default
  double weightDecay = 5e-4;
};

struct PrecisionConfig {
  Amp amp = Amp::kOff;        // autocast around forward and loss (trainer/precision.h); fp16 adds loss
                              // scaling (trainer/grad_scaler.h) and needs CUDA
  bool channelsLast = false;  // model and input batches in the channels-last (NHWC) memory format
};

// One process per rank; rank and world come from comm/rank_discovery.h through the command line.
struct CommConfig {
  CommConfig() { connection.timeoutS = 300; }
  comm::BackendOptions connection;  // --backend, rank and world, rendezvous, Gloo, --timeout
  comm::Topology topology;          // --topology (native: the backend's own all-reduce)
  int ranksPerHost = 0;             // 0: hosts from the real host names
};

struct SyncConfig {
  Sync kind = Sync::kSsgd;
  bool overlap = true;        // ssgd: bucketed all-reduce launched during backward
  double bucketMb = 25;       // ssgd bucket cap (MiB); the first bucket is capped at 1 MiB
  bool localBnStats = false;  // keep BatchNorm running statistics local (no broadcast from rank 0)
  int64_t checkEvery = 0;     // ssgd: compare a parameter checksum across ranks every K steps
};

struct RunConfig {
  // What is trained, where, for how long.
  std::string model = "resnet18";  // models/registry.h's names
  DeviceKind device = DeviceKind::kCpu;
  ParallelMode mode = ParallelMode::kDdp;
  int64_t epochs = 1;
  int64_t maxSteps = 0;  // per epoch; 0 = the whole epoch
  bool evaluate = true;  // test-set accuracy at every epoch end
  uint64_t seed = 0;     // initialization, shuffle, augmentation, pair matching, impairment draws
  int64_t threads = 0;   // intra-op threads; 0 = every core this process may run on

  DataConfig data;
  OptimizerConfig optimizer;
  PrecisionConfig precision;
  CommConfig comm;
  SyncConfig sync;
  comm::Impairment impairment;  // --inject-*: in dtbench's own point-to-point layer; 0 = none.
                                // Its seed is `seed` (resolveDefaults copies it).

  // Run directory and output.
  std::string outDir;
  bool timeline = false;        // write timeline.json (Chrome trace of every phase and bucket)
  int64_t checkpointEvery = 0;  // steps between checkpoints (0: only on preemption)
  bool resume = false;          // continue the run in outDir from its checkpoint
  bool quiet = false;
  std::vector<std::string> commandLine;  // as typed, for config.json

  int rank() const { return comm.connection.rank; }
  int worldSize() const { return comm.connection.worldSize; }
};

// Fills the optimizer-dependent defaults: lr 0.1 / 1e-3 / 1e-3 and momentum 0.9 / - / 0 for
// sgd / adam / rmsprop; the dataset's default --data-dir (cifar10: "data", fashion-mnist:
// /usr/share/datasets/fashion-mnist, where Debian's dataset-fashion-mnist installs it); the
// official CIFAR-10 URL and MD5 for --download; the impairment's seed. Idempotent.
RunConfig resolveDefaults(RunConfig config);

// Throws common::UsageError naming the first flag whose value cannot work (batch 0, negative lr,
// unknown model, missing --out, a combination that cannot run, ...).
void validate(const RunConfig& config);

}  // namespace dtbench::trainer
