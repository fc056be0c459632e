#pragma once
// RunConfig: the one configuration of a training run, nested by concern: what is trained, the data
// and its loading, the optimizer, the precision, how the rank connects to the others (comm), how the
// ranks are kept together (sync) and the injected network impairment. Its member initializers are
// the settings' defaults, each typed here once; the constants below name those that tools other than
// the trainer compare against (the report marks a non-default bucket cap, the step model and the
// trainer cap buckets alike). No LibTorch: the report, predict and the sweep read run directories
// into it (run/config_schema.h), the trainer runs it.
//
// Parsed once from the command line (experiments/cli/train_options.cpp, from the rows of
// run/config_schema.h); every closed set of names is an enum (run/settings.h). Passed down by const
// reference; no other global or mutable configuration exists. The rank and world size it holds are
// the launcher's; once the ranks have met, the trainer's World is authoritative (trainer/world.h).

#include <cstdint>
#include <string>
#include <vector>

#include "comm/backends/backend_options.h"
#include "comm/impairment/impairment.h"
#include "comm/topology/registry.h"
#include "run/data_defaults.h"
#include "run/settings.h"
#include "run/step_jitter.h"

namespace dtbench::run {

// --bucket-mb's default: gradient buckets are capped at 25 MiB, as DistributedDataParallel's.
inline constexpr double kDefaultBucketMb = 25;
// The first bucket is capped at 1 MiB (DDP's _DEFAULT_FIRST_BUCKET_BYTES), whatever --bucket-mb is.
inline constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;
// The largest --bucket-mb: 1 TiB, beyond any model's gradients (one bucket); larger caps would not
// fit a byte count.
inline constexpr double kLargestBucketMb = 1 << 20;
// --timeout's default for `dtbench train`: the deadline of every collective and of the rendezvous.
// (`dtbench allreduce` keeps comm::BackendOptions' own, shorter one.)
inline constexpr double kTrainTimeoutS = 300;

// The optimizers' own defaults where --lr and --momentum are not given (resolveDefaults).
inline constexpr double kSgdLr = 0.1;
inline constexpr double kAdaptiveLr = 1e-3;  // adam, rmsprop
inline constexpr double kSgdMomentum = 0.9;
inline constexpr double kRmspropMomentum = 0.0;

// --compress powersgd's defaults and bounds (trainer/sync/powersgd.h): rank 2 (the paper's CIFAR-10
// setting), and the first 2 steps uncompressed, the least PyTorch's powerSGD_hook allows with error
// feedback and warm start, which dtbench always uses.
inline constexpr int64_t kDefaultCompressRank = 2;
inline constexpr int64_t kLargestCompressRank = 1024;
inline constexpr int64_t kDefaultCompressStart = 2;
inline constexpr int64_t kLeastCompressStart = 2;

// Bytes in `mib` MiB (--bucket-mb and the like), rounded down.
int64_t mibToBytes(double mib);

struct DataConfig {
  DatasetKind dataset = DatasetKind::kCifar10;
  std::string dir;  // "" = the dataset's default folder (resolveDefaults: run/data_defaults.h)
  int64_t syntheticTrainSize = 50000;
  int64_t syntheticTestSize = 10000;
  int64_t batchSize = 128;  // per rank
  int64_t testBatchSize = 100;
  bool dropLast = false;
  // Loading (data/prefetch_loader.h, data/download.h).
  int64_t workers = 2;      // prefetch threads; 0 = batches built on the training thread
  bool onDevice = false;    // keep the uint8 dataset on the GPU and augment there
  bool download = false;    // cifar10: fetch, verify and extract the archive when missing
  std::string downloadUrl = kCifar10Url;  // the official archive (run/data_defaults.h)
  std::string downloadMd5 = kCifar10Md5;
};

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = -1.0;        // < 0: the optimizer's default (resolveDefaults)
  double momentum = -1.0;  // < 0: the optimizer's default
  double weightDecay = 5e-4;
};

struct PrecisionConfig {
  Amp amp = Amp::kOff;        // autocast around forward and loss (trainer/step/numerics/precision.h); fp16 adds loss
                              // scaling (trainer/step/numerics/grad_scaler.h) and needs CUDA
  bool channelsLast = false;  // model and input batches in the channels-last (NHWC) memory format
};

// One process per rank; rank and world come from comm/rank_discovery.h through the command line.
struct CommConfig {
  CommConfig() { connection.timeoutS = kTrainTimeoutS; }
  comm::BackendOptions connection;  // --backend, rank and world, rendezvous, Gloo, --timeout
  comm::Topology topology;          // --topology (native: the backend's own all-reduce)
  int ranksPerHost = 0;             // 0: hosts from the real host names
};

struct SyncConfig {
  Sync kind = Sync::kSsgd;
  bool overlap = true;                // ssgd: bucketed all-reduce launched during backward
  double bucketMb = kDefaultBucketMb;  // ssgd bucket cap (MiB); the first bucket is capped at kFirstBucketBytes
  bool localBnStats = false;          // keep BatchNorm running statistics local (no broadcast from rank 0)
  int64_t checkEvery = 0;             // ssgd: compare a parameter checksum across ranks every K steps
  Compression compress{};                          // ssgd: how the buckets travel (none: the enum's first)
  int64_t compressRank = kDefaultCompressRank;     // powersgd: the rank R of the factors
  int64_t compressStart = kDefaultCompressStart;   // powersgd: steps 1..K all-reduced uncompressed
};

// How the step runs on a GPU and how it is timed (docs/gpu.md).
struct GpuConfig {
  PhaseTiming phaseTiming = PhaseTiming::kEvents;  // trainer/step/step_timer.h
  bool cudnnBenchmark = true;                      // cuDNN autotuning (CUDA only; nothing on the CPU)
  bool cudaGraph = false;                          // capture the whole step once and replay it
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
  int64_t threads = 0;   // intra-op threads; 0 = its share of the cores it may run on (trainer/thread_share.h)

  DataConfig data;
  OptimizerConfig optimizer;
  PrecisionConfig precision;
  CommConfig comm;
  SyncConfig sync;
  GpuConfig gpu;
  comm::Impairment impairment;  // --inject-*: in dtbench's own point-to-point layer; 0 = none.
                                // Its seed is `seed` (resolveDefaults copies it).
  StepJitter stepJitter;        // --inject-step-jitter: a seeded delay added to every step's compute
                                // (run/step_jitter.h), drawn from `seed` and the rank

  // Run directory and output.
  std::string outDir;
  bool timeline = false;        // write timeline.json (Chrome trace of every phase and bucket)
  bool sampleLedger = false;    // write sample_ledger.rank<R>.csv: each step's dataset indices (run/sample_ledger.h)
  int64_t checkpointEvery = 0;  // steps between checkpoints (0: only on preemption)
  bool resume = false;          // continue the run in outDir from its checkpoint
  // --resume at another world size whose ranks cannot share the run's global batch: keep the per-rank
  // batch instead, and scale the learning rate with the global batch (trainer/checkpoint/checkpointer.h).
  bool allowGlobalBatchChange = false;
  bool quiet = false;
  std::vector<std::string> commandLine;  // as typed, for config.json

  int rank() const { return comm.connection.rank; }
  int worldSize() const { return comm.connection.worldSize; }
};

// The defaults that depend on other settings: lr and momentum by optimizer (kSgdLr, kAdaptiveLr,
// kSgdMomentum, kRmspropMomentum; adam has no momentum and gets 0), the dataset's default folder
// (defaultDataDir), and the impairment's seed. Idempotent.
RunConfig resolveDefaults(RunConfig config);

}  // namespace dtbench::run
