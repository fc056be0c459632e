#include "run/config_schema.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include "comm/backends/backend.h"
#include "comm/backends/backend_options.h"
#include "comm/topology/registry.h"
#include "common/usage_error.h"
#include "run/data_defaults.h"

namespace dtbench::run {
namespace {

using json = nlohmann::json;
using common::UsageError;

// How a setting is named in messages: its flag, else its config.json key.
std::string nameOf(const std::string& flag, const std::string& key) { return flag.empty() ? key : flag; }

[[noreturn]] void wrongType(const std::string& name, const char* takes, const json& value) {
  throw UsageError(name + " takes " + takes + ", got " + value.dump());
}

// config.json's (or a flag's) value as the field's type; a value of another type names the setting.
template <typename T>
T valueAs(const json& value, const std::string& name) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) wrongType(name, "true or false", value);
    return value.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) wrongType(name, "a string", value);
    return value.get<std::string>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.is_number()) wrongType(name, "a number", value);
    return value.get<double>();
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0))
      wrongType(name, "a whole number >= 0", value);
    return value.get<uint64_t>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!value.is_array()) wrongType(name, "a list of strings", value);
    for (const json& item : value)
      if (!item.is_string()) wrongType(name, "a list of strings", value);
    return value.get<std::vector<std::string>>();
  } else {
    static_assert(std::is_integral_v<T>, "a setting's field is a bool, string, number, count or list");
    if (!value.is_number_integer()) wrongType(name, "a whole number", value);
    const int64_t whole = value.get<int64_t>();
    if (whole < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        whole > static_cast<int64_t>(std::numeric_limits<T>::max()))
      wrongType(name, "a whole number in range", value);
    return static_cast<T>(whole);
  }
}

// A row whose value is the field `access` reaches: a generic lambda [](auto& c) -> auto& { ... }, so
// that one accessor serves both the const read and the write.
template <typename Access>
Setting field(std::string key, std::string flag, ValueType type, Agreement agreement, std::string help,
              Access access) {
  Setting s;
  s.key = std::move(key);
  s.flag = std::move(flag);
  s.type = type;
  s.agreement = agreement;
  s.help = std::move(help);
  s.get = [access](const RunConfig& c) { return json(access(c)); };
  const std::string name = nameOf(s.flag, s.key);
  s.set = [access, name](RunConfig& c, const json& value) {
    using T = std::decay_t<decltype(access(c))>;
    access(c) = valueAs<T>(value, name);
  };
  return s;
}

// A row choosing among a closed set: config.json and the command line hold the name.
template <typename Enum, typename Access>
Setting choice(std::string key, std::string flag, Agreement agreement, std::string help,
               const common::NamedValues<Enum>& names, Access access) {
  Setting s;
  s.key = std::move(key);
  s.flag = std::move(flag);
  s.type = ValueType::kText;
  s.agreement = agreement;
  s.help = std::move(help);
  s.get = [access, &names](const RunConfig& c) { return json(names.name(access(c))); };
  const std::string name = nameOf(s.flag, s.key);
  s.set = [access, &names, name](RunConfig& c, const json& value) {
    access(c) = names.parse(valueAs<std::string>(value, name));
  };
  return s;
}

template <typename Access>
Setting toggle(std::string key, std::string flag, bool sets, Agreement agreement, std::string help, Access access) {
  Setting s = field(std::move(key), std::move(flag), ValueType::kSwitch, agreement, std::move(help), access);
  s.switchValue = sets;
  return s;
}

Setting withRule(Setting s, std::string text, std::function<bool(const json&)> holds) {
  s.rule = Rule{std::move(text), std::move(holds)};
  return s;
}

bool finite(const json& v) { return std::isfinite(v.get<double>()); }

std::string number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::vector<Setting> makeSettings() {
  const char* model = "Model and data";
  const char* loading = "Data loading";
  const char* optimization = "Optimization";
  const char* precision = "Precision and memory layout";
  const char* gpu = "GPU execution and phase timing";
  const char* distributed = "Distributed training (one process per rank: dtbench launch, mpirun or srun)";
  const char* output = "Output";
  const char* ranks = "Ranks and rendezvous (default: torchrun, Open MPI or Slurm variables)";
  using A = Agreement;
  using V = ValueType;
  std::vector<Setting> rows;
  const auto add = [&](Setting s, const char* group) {
    s.group = group;
    rows.push_back(std::move(s));
  };
  const auto atLeast = [](int64_t least) { return [least](const json& v) { return v.get<int64_t>() >= least; }; };

  // What is trained, on what and how: each changes the parameters (kResumed), but for where each rank
  // finds its data and how fast it loads and computes (the batches are the same bit for bit).
  add(field("model", "--model", V::kText, A::kResumed, "Model", [](auto& c) -> auto& { return c.model; }), model);
  add(choice("dataset", "--dataset", A::kResumed,
             "Dataset: " + datasetNames().joined() +
                 " (fashion-mnist: 28x28 zero-padded to 32x32, 1 channel; training batches of every dataset get a "
                 "random crop with padding 4 and a horizontal flip)",
             datasetNames(), [](auto& c) -> auto& { return c.data.dataset; }),
      model);
  {
    Setting s = field("data_dir", "--data-dir", V::kText, A::kPerRank,
                      std::string("Where the dataset lives (default: the dataset's own place; cifar10: ") +
                          kCifar10DefaultDir + ", the folder holding cifar-10-batches-bin/; fashion-mnist: " +
                          kFashionMnistDefaultDir + ", where Debian's dataset-fashion-mnist installs its IDX files)",
                      [](auto& c) -> auto& { return c.data.dir; });
    s.defaultShown = false;
    add(std::move(s), model);
  }
  add(withRule(field("synthetic_train_size", "--synthetic-train-size", V::kInteger, A::kResumed,
                     "Training images of --dataset synthetic", [](auto& c) -> auto& { return c.data.syntheticTrainSize; }),
               ">= 1", atLeast(1)),
      model);
  // Only rank 0 evaluates and writes: the test set's size, batch and evaluation are its own.
  add(withRule(field("synthetic_test_size", "--synthetic-test-size", V::kInteger, A::kPerRank,
                     "Test images of --dataset synthetic", [](auto& c) -> auto& { return c.data.syntheticTestSize; }),
               ">= 0", atLeast(0)),
      model);
  add(choice("device", "--device", A::kPerRank, deviceNames().joined(", ", " or "), deviceNames(),
             [](auto& c) -> auto& { return c.device; }),
      model);

  add(withRule(field("workers", "--workers", V::kInteger, A::kPerRank,
                     "Threads that build batches ahead of the training step (0: built on the training thread); "
                     "batches are bit-identical for any count",
                     [](auto& c) -> auto& { return c.data.workers; }),
               "in [0, 64] (0 = no prefetch threads)",
               [](const json& v) { return v.get<int64_t>() >= 0 && v.get<int64_t>() <= 64; }),
      loading);
  add(toggle("data_on_device", "--data-on-device", true, A::kPerRank,
             "Keep the uint8 dataset on the GPU and augment batches there (needs --device cuda)",
             [](auto& c) -> auto& { return c.data.onDevice; }),
      loading);
  add(toggle("download", "--download", true, A::kPerRank,
             "cifar10: download, MD5-check and extract cifar-10-binary.tar.gz into --data-dir when missing",
             [](auto& c) -> auto& { return c.data.download; }),
      loading);
  add(field("download_url", "--download-url", V::kText, A::kPerRank, "Mirror of cifar-10-binary.tar.gz for --download",
            [](auto& c) -> auto& { return c.data.downloadUrl; }),
      loading);
  {
    Setting s = withRule(field("download_md5", "--download-md5", V::kText, A::kPerRank,
                               "Expected MD5 of the --download archive", [](auto& c) -> auto& { return c.data.downloadMd5; }),
                         "32 lowercase hex digits", [](const json& v) {
                           const std::string md5 = v.get<std::string>();
                           return md5.empty() ||
                                  (md5.size() == 32 && md5.find_first_not_of("0123456789abcdef") == std::string::npos);
                         });
    // Hex digits in either case are the same digest: kept in lowercase.
    const auto set = s.set;
    s.set = [set](RunConfig& c, const json& value) {
      set(c, value);
      for (char& ch : c.data.downloadMd5) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    };
    add(std::move(s), loading);
  }

  add(choice("optimizer", "--optimizer", A::kResumed, "Optimizer: " + optimizerNames().joined(), optimizerNames(),
             [](auto& c) -> auto& { return c.optimizer.kind; }),
      optimization);
  {
    // NaN fails every comparison and inf passes "> 0": both are refused by name.
    Setting lr = withRule(field("lr", "--lr", V::kNumber, A::kResumed,
                                "Learning rate (default: " + number(kSgdLr) + " sgd, " + number(kAdaptiveLr) +
                                    " adam and rmsprop)",
                                [](auto& c) -> auto& { return c.optimizer.lr; }),
                          "a finite number > 0", [](const json& v) { return finite(v) && v.get<double>() > 0; });
    lr.defaultShown = false;
    add(std::move(lr), optimization);
    Setting momentum = withRule(field("momentum", "--momentum", V::kNumber, A::kResumed,
                                      "Momentum of sgd and rmsprop (default: " + number(kSgdMomentum) + " sgd, " +
                                          number(kRmspropMomentum) + " rmsprop)",
                                      [](auto& c) -> auto& { return c.optimizer.momentum; }),
                                "in [0, 1)", [](const json& v) { return v.get<double>() >= 0 && v.get<double>() < 1; });
    momentum.defaultShown = false;
    add(std::move(momentum), optimization);
  }
  add(withRule(field("weight_decay", "--weight-decay", V::kNumber, A::kResumed, "Weight decay",
                     [](auto& c) -> auto& { return c.optimizer.weightDecay; }),
               "a finite number >= 0", [](const json& v) { return finite(v) && v.get<double>() >= 0; }),
      optimization);
  add(withRule(field("epochs", "--epochs", V::kInteger, A::kResumed, "Epochs", [](auto& c) -> auto& { return c.epochs; }),
               ">= 1", atLeast(1)),
      optimization);
  add(withRule(field("max_steps", "--max-steps", V::kInteger, A::kResumed,
                     "Steps per epoch at most (0: the whole epoch); a cut epoch is reported as extrapolated",
                     [](auto& c) -> auto& { return c.maxSteps; }),
               ">= 0 (0 = whole epoch)", atLeast(0)),
      optimization);
  // At most 2^31 - 1: what every reader of a run directory takes as a count (the report's, predict's).
  add(withRule(field("batch_size", "--batch-size", V::kInteger, A::kResumed, "Training batch size (per rank)",
                     [](auto& c) -> auto& { return c.data.batchSize; }),
               "from 1 to 2147483647",
               [](const json& v) { return v.get<int64_t>() >= 1 && v.get<int64_t>() <= 2147483647; }),
      optimization);
  add(withRule(field("test_batch_size", "--test-batch-size", V::kInteger, A::kPerRank, "Evaluation batch size",
                     [](auto& c) -> auto& { return c.data.testBatchSize; }),
               ">= 1", atLeast(1)),
      optimization);
  add(toggle("drop_last", "--drop-last", true, A::kResumed, "Drop the last incomplete training batch",
             [](auto& c) -> auto& { return c.data.dropLast; }),
      optimization);
  add(toggle("evaluate", "--no-eval", false, A::kPerRank, "Skip the test-set evaluation at each epoch end",
             [](auto& c) -> auto& { return c.evaluate; }),
      optimization);
  add(field("seed", "--seed", V::kCount, A::kResumed, "Seed of initialization, shuffle and augmentation",
            [](auto& c) -> auto& { return c.seed; }),
      optimization);
  // Its upper bound is this machine's cores: trainer/config.cpp checks it.
  add(field("threads", "--threads", V::kInteger, A::kPerRank,
            "Intra-op threads (0: this rank's share of the cores it may run on, those shared with other ranks of its "
            "machine divided among them; at most the cores it may run on)",
            [](auto& c) -> auto& { return c.threads; }),
      optimization);

  add(choice("amp", "--amp", A::kResumed,
             "Automatic mixed precision around forward and loss: off, bf16 (CPU or GPU) or fp16 (GPU only, with "
             "dynamic loss scaling); parameters, gradients and the all-reduce stay fp32",
             ampNames(), [](auto& c) -> auto& { return c.precision.amp; }),
      precision);
  add(toggle("channels_last", "--channels-last", true, A::kResumed,
             "Model and input batches in the channels-last (NHWC) memory format",
             [](auto& c) -> auto& { return c.precision.channelsLast; }),
      precision);

  // Timing and kernel choice change how fast a step runs, not what it computes beyond rounding: per rank.
  // Except how batches.csv's phases are timed: one run's rows, its config.json and the report's columns
  // must say the same, so every rank and a resumed run keep it.
  add(choice("phase_timing", "--phase-timing", A::kResumed,
             "How the step's phases (batches.csv's h2d_s, forward_s, backward_s, optimizer_s) are timed: events "
             "(CUDA events read back without stalling the step; on the CPU the host clock, which there is the same), "
             "sync (wait for the device at every phase boundary) or none (those columns left empty)",
             phaseTimingNames(), [](auto& c) -> auto& { return c.gpu.phaseTiming; }),
      gpu);
  add(choice("cudnn_benchmark", "--cudnn-benchmark", A::kPerRank,
             "cuDNN autotuning of convolutions: on or off (--device cuda; nothing on the CPU)", cudnnBenchmarkNames(),
             [](auto& c) -> auto& { return c.gpu.cudnnBenchmark; }),
      gpu);
  // A captured step issues its collectives from the graph: every rank must replay the same one.
  add(toggle("cuda_graph", "--cuda-graph", true, A::kAllRanks,
             "Capture the whole training step (forward, loss, backward, SGD) in a CUDA graph after three eager "
             "steps and replay it (--device cuda, one rank, --optimizer sgd; refused with the reason elsewhere)",
             [](auto& c) -> auto& { return c.gpu.cudaGraph; }),
      gpu);

  // How the same sums travel: the collectives (their kind, sizes and order) must match across ranks, but a
  // resumed run may measure another algorithm; sums differ only in rounding.
  add(choice("backend", "--backend", A::kAllRanks, comm::backendNames().joined(", ", " or "), comm::backendNames(),
             [](auto& c) -> auto& { return c.comm.connection.backend; }),
      distributed);
  {
    Setting s;
    s.key = "topology";
    s.flag = "--topology";
    s.agreement = A::kAllRanks;
    s.help = "All-reduce algorithm: " + comm::topologyHelp();
    s.get = [](const RunConfig& c) { return json(c.comm.topology.name()); };
    s.set = [](RunConfig& c, const json& value) {
      c.comm.topology = comm::Topology::parse(valueAs<std::string>(value, "--topology"));
    };
    add(std::move(s), distributed);
  }
  add(choice("sync", "--sync", A::kResumed,
             "ssgd: gradients averaged over all ranks every step; pairavg: each step a seeded perfect matching "
             "pairs the ranks and each pair averages parameters",
             syncNames(), [](auto& c) -> auto& { return c.sync.kind; }),
      distributed);
  add(toggle("overlap", "--no-overlap", false, A::kAllRanks,
             "ssgd: one fused all-reduce after backward instead of buckets launched during backward",
             [](auto& c) -> auto& { return c.sync.overlap; }),
      distributed);
  add(withRule(field("bucket_mb", "--bucket-mb", V::kNumber, A::kAllRanks,
                     "ssgd: bucket cap in MiB (the first bucket is capped at " + number(kFirstBucketBytes >> 20) +
                         " MiB)",
                     [](auto& c) -> auto& { return c.sync.bucketMb; }),
               "a finite number > 0 and at most " + std::to_string(static_cast<int64_t>(kLargestBucketMb)) + " (1 TiB)",
               [](const json& v) { return finite(v) && v.get<double>() > 0 && v.get<double>() <= kLargestBucketMb; }),
      distributed);
  // BatchNorm statistics broadcast from rank 0 each step or kept per rank: a collective, and the model
  // a resumed run continues.
  add(toggle("local_bn_stats", "--local-bn-stats", true, A::kResumed,
             "Keep BatchNorm running statistics local instead of broadcasting rank 0's every step",
             [](auto& c) -> auto& { return c.sync.localBnStats; }),
      distributed);
  // Collectives at agreed steps (a checksum comparison, a checkpoint's gathers): the same period on every
  // rank, but checking or checkpointing more or less often does not change the model.
  add(withRule(field("check_every", "--check-every", V::kInteger, A::kAllRanks,
                     "ssgd: every K steps verify that all ranks hold identical parameters (0: never)",
                     [](auto& c) -> auto& { return c.sync.checkEvery; }),
               ">= 0 (0 = never)", atLeast(0)),
      distributed);
  // How the gradients travel changes what every rank adds up: the same on every rank, and kept by --resume.
  add(choice("compress", "--compress", A::kResumed, "ssgd: how gradient buckets travel: " + compressionHelp(),
             compressionNames(), [](auto& c) -> auto& { return c.sync.compress; }),
      distributed);
  add(withRule(field("compress_rank", "--compress-rank", V::kInteger, A::kResumed,
                     "powersgd: the rank R of the low-rank factors (PyTorch's matrix_approximation_rank)",
                     [](auto& c) -> auto& { return c.sync.compressRank; }),
               "in [1, " + std::to_string(kLargestCompressRank) + "]",
               [](const json& v) { return v.get<int64_t>() >= 1 && v.get<int64_t>() <= kLargestCompressRank; }),
      distributed);
  add(withRule(field("compress_start", "--compress-start", V::kInteger, A::kResumed,
                     "powersgd: the first K steps of the run are all-reduced uncompressed (PyTorch's "
                     "start_powerSGD_iter; at least " + std::to_string(kLeastCompressStart) +
                         ", as PyTorch requires with error feedback and warm start)",
                     [](auto& c) -> auto& { return c.sync.compressStart; }),
               ">= " + std::to_string(kLeastCompressStart), atLeast(kLeastCompressStart)),
      distributed);
  // dp under several ranks is refused on each rank (trainer/config.cpp).
  add(choice("mode", "--mode", A::kPerRank,
             "ddp: one process per rank; dp: one process driving every local GPU (DataParallel, CUDA only)",
             modeNames(), [](auto& c) -> auto& { return c.mode; }),
      distributed);
  // The impairment holds this rank's own sends: a per-rank value emulates an uneven network and changes
  // timing, not the result. comm::checkImpairment checks the values together (trainer/config.cpp).
  add(field("inject_delay_ms", "--inject-delay-ms", V::kNumber, A::kPerRank,
            "Hold every message dtbench sends point-to-point this long (emulated latency; not with --topology native)",
            [](auto& c) -> auto& { return c.impairment.delayMs; }),
      distributed);
  add(field("inject_rate_gbps", "--inject-rate-gbps", V::kNumber, A::kPerRank,
            "Hold every message for bytes / rate (emulated link rate, Gbit/s; 0: none)",
            [](auto& c) -> auto& { return c.impairment.rateGbps; }),
      distributed);
  add(field("inject_loss_pct", "--inject-loss-pct", V::kNumber, A::kPerRank,
            "Emulated TCP segment loss: each lost 1448-byte segment holds its message --inject-rto-ms",
            [](auto& c) -> auto& { return c.impairment.lossPercent; }),
      distributed);
  add(field("inject_rto_ms", "--inject-rto-ms", V::kNumber, A::kPerRank, "Cost of one lost segment (a retransmission timeout)",
            [](auto& c) -> auto& { return c.impairment.rtoMs; }),
      distributed);
  {
    // Every rank draws from the same distribution (the draws differ by rank): a run with another one is
    // another measurement, though not another result, so a resumed run may change it.
    Setting s;
    s.key = "inject_step_jitter";
    s.flag = "--inject-step-jitter";
    s.agreement = A::kAllRanks;
    s.help = "Add a seeded delay to every step's compute, slept at the end of forward (counted in forward_s): none, "
             "normal:MEAN_MS:SD_MS (negative draws taken as 0) or exp:MEAN_MS (exponential); each rank draws its own "
             "from --seed, the rank and the step, so reruns repeat";
    s.get = [](const RunConfig& c) { return json(c.stepJitter.text()); };
    s.set = [](RunConfig& c, const json& value) {
      c.stepJitter = StepJitter::parse(valueAs<std::string>(value, "--inject-step-jitter"));
    };
    add(std::move(s), distributed);
  }

  {
    Setting s = field("out", "--out", V::kText, A::kPerRank, "Run directory to create (must not hold a run already)",
                      [](auto& c) -> auto& { return c.outDir; });
    s.defaultShown = false;
    add(std::move(s), output);
  }
  // Every rank's trace events reach rank 0; a rank without --timeline would send none.
  add(toggle("timeline", "--timeline", true, A::kAllRanks,
             "Write timeline.json, a Chrome trace of every phase and bucket of every rank",
             [](auto& c) -> auto& { return c.timeline; }),
      output);
  // Every rank's rows reach rank 0 at the epoch's end; a resumed run keeps it, so that the ledger has no gap
  // that `dtbench audit` would report as missing samples.
  add(toggle("sample_ledger", "--sample-ledger", true, A::kResumed,
             "Write sample_ledger.rank<R>.csv: the dataset indices of every step of every rank, for dtbench audit",
             [](auto& c) -> auto& { return c.sampleLedger; }),
      output);
  add(withRule(field("checkpoint_every", "--checkpoint-every", V::kInteger, A::kAllRanks,
                     "Write a checkpoint every K steps and at every epoch end (0: only when preempted by SIGTERM)",
                     [](auto& c) -> auto& { return c.checkpointEvery; }),
               ">= 0 (0 = only when preempted)", atLeast(0)),
      output);
  {
    // A resuming rank receives rank 0's checkpoint through collectives the others would not join. Not in
    // config.json: a resumed run keeps the config.json it started with.
    Setting s = toggle("resume", "--resume", true, A::kAllRanks,
                       "Continue the interrupted run in --out from its checkpoint (same flags as the run)",
                       [](auto& c) -> auto& { return c.resume; });
    s.recorded = false;
    add(std::move(s), output);
    // Every rank derives its batch and learning rate from it when --resume changes the world size. config.json
    // keeps the run's first value; what a resume did is in its "segments".
    add(toggle("allow_global_batch_change", "--allow-global-batch-change", true, A::kAllRanks,
               "--resume at a world size that does not divide the run's global batch: keep the per-rank batch, change "
               "the global batch and scale the learning rate linearly with it",
               [](auto& c) -> auto& { return c.allowGlobalBatchChange; }),
        output);
    Setting quiet = toggle("quiet", "--quiet", true, A::kPerRank, "No progress line on stderr",
                           [](auto& c) -> auto& { return c.quiet; });
    quiet.recorded = false;
    add(std::move(quiet), output);
  }

  // The rank flags: experiments/cli/rank_options.cpp adds them to train and allreduce, and finds the rank
  // and world from them and the launcher's variables (comm/rank_discovery.h).
  const auto rankFlag = [&](Setting s, bool recorded) {
    s.rankFlag = true;
    s.recorded = recorded;
    if (!recorded) s.key.clear();
    add(std::move(s), ranks);
  };
  const auto discovered = [](Setting s) {
    s.defaultShown = false;
    return s;
  };
  rankFlag(discovered(field("rank", "--rank", V::kInteger, A::kPerRank, "This rank",
                            [](auto& c) -> auto& { return c.comm.connection.rank; })),
           false);
  // A world always agrees on its own size. A resumed --sync ssgd run may have another (its ranks hold the same
  // model; trainer/checkpoint/checkpointer.h deals the rest of the epoch to the new ranks); the checkpointer
  // refuses another size where the state is per rank (pairavg, --compress).
  rankFlag(discovered(withRule(field("world_size", "--world-size", V::kInteger, A::kAllRanks, "Number of ranks",
                                     [](auto& c) -> auto& { return c.comm.connection.worldSize; }),
                               ">= 1", atLeast(1))),
           true);
  rankFlag(discovered(field("master_addr", "--master-addr", V::kText, A::kPerRank, "Rendezvous host (gloo)",
                            [](auto& c) -> auto& { return c.comm.connection.masterAddr; })),
           false);
  rankFlag(discovered(field("master_port", "--master-port", V::kInteger, A::kPerRank, "Rendezvous port (gloo)",
                            [](auto& c) -> auto& { return c.comm.connection.masterPort; })),
           false);
  rankFlag(discovered(field("store_path", "--store-path", V::kText, A::kPerRank,
                            "Rendezvous through a FileStore at this path instead (fresh per job attempt)",
                            [](auto& c) -> auto& { return c.comm.connection.storePath; })),
           false);
  rankFlag(discovered(withRule(field("ranks_per_host", "--ranks-per-host", V::kInteger, A::kAllRanks,
                                     "Emulate hosts of K ranks (default: DTBENCH_RANKS_PER_HOST, else real hostnames)",
                                     [](auto& c) -> auto& { return c.comm.ranksPerHost; }),
                               ">= 0 (0 = real host names)", atLeast(0))),
           true);
  // Each rank's own connection.
  rankFlag(discovered(field("gloo_iface", "--gloo-iface", V::kText, A::kPerRank,
                            "Network interface for gloo (default: GLOO_SOCKET_IFNAME)",
                            [](auto& c) -> auto& { return c.comm.connection.glooIface; })),
           true);
  rankFlag(withRule(field("gloo_threads", "--gloo-threads", V::kInteger, A::kPerRank,
                          "Gloo worker threads (at most " + std::to_string(comm::kMaxGlooThreads) + ")",
                          [](auto& c) -> auto& { return c.comm.connection.glooThreads; }),
                    "in [1, " + std::to_string(comm::kMaxGlooThreads) + "]",
                    [](const json& v) { return v.get<int64_t>() >= 1 && v.get<int64_t>() <= comm::kMaxGlooThreads; }),
           true);
  rankFlag(withRule(field("timeout_s", "--timeout", V::kNumber, A::kPerRank,
                          "Seconds any one collective may take before the run fails, naming the rank it waited for where the "
                          "operation tells (a point-to-point topology's send or receive, a peer that died; a "
                          "backend's own collective says it cannot)",
                          [](auto& c) -> auto& { return c.comm.connection.timeoutS; }),
                    "a number of seconds from 0.001 to 2592000 (30 days)",
                    [](const json& v) { return finite(v) && v.get<double>() >= 0.001 && v.get<double>() <= 2592000; }),
           true);
  {
    Setting s = discovered(field("message_log", "--message-log", V::kText, A::kPerRank,
                                 "Record every operation handed to the communicator and the rank's TCP sockets into "
                                 "DIR/messages.rank<R>.csv and DIR/sockets.rank<R>.csv (default: DTBENCH_MESSAGE_LOG; "
                                 "docs/wire.md)",
                                 [](auto& c) -> auto& { return c.comm.connection.messageLog; }));
    // config.json: null when off.
    const auto set = s.set;
    s.get = [](const RunConfig& c) {
      return c.comm.connection.messageLog.empty() ? json(nullptr) : json(c.comm.connection.messageLog);
    };
    s.set = [set](RunConfig& c, const json& value) {
      if (value.is_null()) c.comm.connection.messageLog.clear();
      else set(c, value);
    };
    rankFlag(std::move(s), true);
  }

  // Recorded, set by no flag.
  Setting commandLine = field("command_line", "", V::kTexts, A::kPerRank, "The command line as typed",
                              [](auto& c) -> auto& { return c.commandLine; });
  add(std::move(commandLine), "");
  return rows;
}

}  // namespace

std::string valueText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    std::ostringstream text;
    text << value.get<double>();
    return text.str();
  }
  return value.dump();
}

json Setting::defaultValue() const {
  if (!defaultShown || !get) return nullptr;
  return get(RunConfig{});
}

std::string Setting::defaultText() const {
  const json value = defaultValue();
  if (value.is_null() || type == ValueType::kSwitch) return "";
  return valueText(value);
}

const std::vector<Setting>& settings() {
  static const std::vector<Setting> rows = makeSettings();
  return rows;
}

const Setting* findSettingByKey(const std::string& key) {
  for (const Setting& s : settings())
    if (!key.empty() && s.key == key) return &s;
  return nullptr;
}

const Setting* findSettingByFlag(const std::string& flag) {
  for (const Setting& s : settings())
    if (!flag.empty() && s.flag == flag) return &s;
  return nullptr;
}

void checkRule(const Setting& s, const RunConfig& config) {
  if (!s.rule || !s.get) return;
  const json value = s.get(config);
  if (!s.rule->holds(value)) throw UsageError(nameOf(s.flag, s.key) + " must be " + s.rule->text + ", got " + valueText(value));
}

void checkRules(const RunConfig& config) {
  for (const Setting& s : settings()) checkRule(s, config);
}

json settingsJson(const RunConfig& config) {
  json out = json::object();
  for (const Setting& s : settings())
    if (s.recorded && s.get) out[s.key] = s.get(config);
  return out;
}

RunConfig readSettings(const json& config, std::vector<std::string>& problems) {
  RunConfig read;
  if (!config.is_object()) return read;
  // Every config.json dtbench has written holds these; without one the run's figures would rest on a
  // default nobody ran (a batch of 128).
  for (const char* key : {"model", "batch_size"})
    if (!config.contains(key)) problems.push_back(std::string("config.json: ") + key + " is missing");
  for (const Setting& s : settings()) {
    if (!s.recorded || !s.set || !config.contains(s.key)) continue;
    try {
      // A value that breaks its setting's rule (a world size that is not a count) is a problem like a
      // mistyped one, and leaves the default in place.
      RunConfig tried = read;
      s.set(tried, config.at(s.key));
      checkRule(s, tried);
      read = std::move(tried);
    } catch (const std::exception& e) {
      problems.push_back("config.json: " + s.key + ": " + e.what());
    }
  }
  return read;
}

json agreedSettingsJson(const RunConfig& config) {
  json out = json::object();
  for (const Setting& s : settings())
    if (s.agreement != Agreement::kPerRank && s.get) out[s.key] = s.get(config);
  return out;
}

namespace {

// The rows of `kinds` whose value in `recorded` differs from `now`'s, as describeResumeChanges says them.
std::string describeChanges(const json& recorded, const RunConfig& now, std::initializer_list<Agreement> kinds) {
  std::string changes;
  for (const Setting& s : settings()) {
    if (std::find(kinds.begin(), kinds.end(), s.agreement) == kinds.end() || !s.get || !recorded.is_object() ||
        !recorded.contains(s.key))
      continue;
    const json value = s.get(now);
    if (recorded.at(s.key) == value) continue;
    changes += std::string(changes.empty() ? "" : ", ") + s.flag + " (" + s.key + " in the run's config.json: " +
               recorded.at(s.key).dump() + ", now: " + value.dump() + ")";
  }
  return changes;
}

}  // namespace

std::string describeResumeChanges(const json& recorded, const RunConfig& now) {
  return describeChanges(recorded, now, {Agreement::kResumed});
}

std::string describeRunChanges(const json& recorded, const RunConfig& now) {
  return describeChanges(recorded, now, {Agreement::kAllRanks, Agreement::kResumed});
}

}  // namespace dtbench::run
