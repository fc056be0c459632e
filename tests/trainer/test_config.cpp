#include "catch_torch.h"
#include "common/named_values.h"
#include "common/usage_error.h"

#include "run/config_schema.h"
#include "dtbench/build_config.h"
#include "trainer/config.h"
#include "trainer/record/config_json.h"

#include <string>
#include <vector>

using dtbench::trainer::RunConfig;
using namespace dtbench::trainer;
using dtbench::common::UsageError;

namespace {

RunConfig valid() {
  RunConfig c = dtbench::trainer::resolveDefaults(RunConfig{});
  c.outDir = "somewhere";
  return c;
}

std::string errorOf(const RunConfig& c) {
  try {
    dtbench::trainer::validate(c);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("defaults are the coursework's and validate", "[config]") {
  const RunConfig c = valid();
  CHECK(c.optimizer.kind == OptimizerKind::kSgd);
  CHECK(c.optimizer.lr == 0.1);
  CHECK(c.optimizer.momentum == 0.9);
  CHECK(c.optimizer.weightDecay == 5e-4);
  CHECK(c.data.batchSize == 128);
  CHECK(c.data.testBatchSize == 100);
  CHECK(errorOf(c).empty());
}

TEST_CASE("optimizer-dependent defaults", "[config]") {
  RunConfig adam;
  adam.optimizer.kind = OptimizerKind::kAdam;
  adam = dtbench::trainer::resolveDefaults(adam);
  CHECK(adam.optimizer.lr == 1e-3);
  CHECK(adam.optimizer.momentum == 0.0);
  RunConfig rmsprop;
  rmsprop.optimizer.kind = OptimizerKind::kRmsprop;
  rmsprop.optimizer.lr = 0.5;
  rmsprop = dtbench::trainer::resolveDefaults(rmsprop);
  CHECK(rmsprop.optimizer.lr == 0.5);  // an explicit value is kept
  CHECK(rmsprop.optimizer.momentum == 0.0);
}

TEST_CASE("impossible values name their flag", "[config]") {
  RunConfig c = valid();
  c.data.batchSize = 0;
  CHECK_THAT(errorOf(c), Catch::Contains("--batch-size") && Catch::Contains("got 0"));
  c = valid();
  c.optimizer.lr = 0;
  CHECK_THAT(errorOf(c), Catch::Contains("--lr"));
  c = valid();
  c.epochs = 0;
  CHECK_THAT(errorOf(c), Catch::Contains("--epochs"));
  c = valid();
  c.data.testBatchSize = -3;
  CHECK_THAT(errorOf(c), Catch::Contains("--test-batch-size"));
  c = valid();
  c.optimizer.weightDecay = -1;
  CHECK_THAT(errorOf(c), Catch::Contains("--weight-decay"));
  c = valid();
  c.outDir.clear();
  CHECK_THAT(errorOf(c), Catch::Contains("--out"));
}

// Names of the closed sets are parsed into enums once (the name tables); the model, an open
// registry, is checked by validate().
template <typename Enum>
std::string parseErrorOf(const dtbench::common::NamedValues<Enum>& names, const std::string& text) {
  try {
    names.parse(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("unknown names list the valid ones", "[config]") {
  CHECK_THAT(parseErrorOf(optimizerNames(), "lamb"), Catch::Contains("'lamb'") && Catch::Contains("sgd, adam, rmsprop"));
  RunConfig c = valid();
  c.model = "resnet19";
  CHECK_THAT(errorOf(c), Catch::Contains("'resnet19'") && Catch::Contains("resnet18") && Catch::Contains("lenet"));
  CHECK_THAT(parseErrorOf(datasetNames(), "imagenet"), Catch::Contains("cifar10") && Catch::Contains("synthetic"));
}

TEST_CASE("the configuration's JSON holds every field by its flag's name", "[config]") {
  RunConfig c = valid();
  c.seed = 42;
  c.commandLine = {"dtbench", "train", "--seed", "42"};
  const auto j = dtbench::run::settingsJson(c);
  CHECK(j.at("seed") == 42);
  CHECK(j.at("lr") == 0.1);
  CHECK(j.at("batch_size") == 128);
  CHECK(j.at("weight_decay") == 5e-4);
  CHECK(j.at("command_line").size() == 4);
  CHECK(j.at("model") == "resnet18");
}

TEST_CASE("data loading flags validate and land in the JSON", "[config]") {
  RunConfig c = valid();
  CHECK(c.data.dir == "data");  // cifar10's default location
  CHECK(c.data.workers == 2);
  CHECK(c.data.downloadMd5 == "c32a1d4ab5d03f1284b67883e8d87530");
  RunConfig fashion;
  fashion.data.dataset = DatasetKind::kFashionMnist;
  fashion = dtbench::trainer::resolveDefaults(fashion);
  CHECK(fashion.data.dir == "/usr/share/datasets/fashion-mnist");
  fashion.data.dir = "mine";
  CHECK(dtbench::trainer::resolveDefaults(fashion).data.dir == "mine");  // an explicit one is kept

  c.data.workers = -1;
  CHECK_THAT(errorOf(c), Catch::Contains("--workers"));
  c = valid();
  c.data.onDevice = true;
  CHECK_THAT(errorOf(c), Catch::Contains("--data-on-device needs a CUDA device"));
  c = valid();
  c.data.dataset = DatasetKind::kFashionMnist;
  c.data.download = true;
  CHECK_THAT(errorOf(c), Catch::Contains("--download") && Catch::Contains("dataset-fashion-mnist"));
  c = valid();
  c.data.downloadMd5 = "abc";
  CHECK_THAT(errorOf(c), Catch::Contains("--download-md5"));

  c = valid();
  c.data.workers = 3;
  c.data.download = true;
  const auto j = dtbench::run::settingsJson(c);
  CHECK(j.at("workers") == 3);
  CHECK(j.at("download") == true);
  CHECK(j.at("data_on_device") == false);
  CHECK(j.at("download_url") == "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz");
  CHECK(j.at("data_dir") == "data");
}

TEST_CASE("amp and channels-last flags validate and land in the JSON", "[config]") {
  RunConfig c = valid();
  CHECK(c.precision.amp == Amp::kOff);
  CHECK_FALSE(c.precision.channelsLast);
  CHECK(dtbench::run::settingsJson(c).at("amp") == "off");
  CHECK(dtbench::run::settingsJson(c).at("channels_last") == false);

  CHECK_THAT(parseErrorOf(ampNames(), "fp8"),
             Catch::Contains("'fp8'") && Catch::Contains("--amp") && Catch::Contains("off, bf16, fp16"));
  c.precision.amp = Amp::kBf16;
  CHECK(errorOf(c).empty());  // bf16 autocast runs on the CPU
  c.precision.amp = Amp::kFp16;
  CHECK_THAT(errorOf(c), Catch::Contains("--amp fp16 needs --device cuda") && Catch::Contains("--amp bf16") &&
                             Catch::Contains("GPU"));
  c.device = DeviceKind::kCuda;
  CHECK(errorOf(c).empty());  // valid as a configuration; the trainer then needs a visible GPU

  c = valid();
  c.precision.channelsLast = true;
  CHECK(errorOf(c).empty());
  c.precision.amp = Amp::kBf16;
  const auto j = dtbench::run::settingsJson(c);
  CHECK(j.at("amp") == "bf16");
  CHECK(j.at("channels_last") == true);
  c.model = "lenet";  // flattens with flatten(), so any memory format works
  CHECK(errorOf(c).empty());
}

TEST_CASE("phase timing and cuDNN autotuning flags validate and land in the JSON", "[config]") {
  RunConfig c = valid();
  CHECK(c.gpu.phaseTiming == dtbench::run::PhaseTiming::kEvents);
  CHECK(c.gpu.cudnnBenchmark);
  CHECK_FALSE(c.gpu.cudaGraph);
  auto j = dtbench::run::settingsJson(c);
  CHECK(j.at("phase_timing") == "events");
  CHECK(j.at("cudnn_benchmark") == "on");
  CHECK(j.at("cuda_graph") == false);
  CHECK_THAT(parseErrorOf(dtbench::run::phaseTimingNames(), "cuda"),
             Catch::Contains("--phase-timing") && Catch::Contains("events, sync or none") && Catch::Contains("'cuda'"));
  CHECK_THAT(parseErrorOf(dtbench::run::cudnnBenchmarkNames(), "yes"),
             Catch::Contains("--cudnn-benchmark") && Catch::Contains("on or off"));
  c.gpu.phaseTiming = dtbench::run::PhaseTiming::kNone;
  c.gpu.cudnnBenchmark = false;
  CHECK(errorOf(c).empty());
  j = dtbench::run::settingsJson(c);
  CHECK(j.at("phase_timing") == "none");
  CHECK(j.at("cudnn_benchmark") == "off");
  // A run directory written before these settings existed reads with their defaults.
  j.erase("phase_timing");
  j.erase("cudnn_benchmark");
  j.erase("cuda_graph");
  std::vector<std::string> problems;
  const RunConfig old = dtbench::run::readSettings(j, problems);
  CHECK(problems.empty());
  CHECK(old.gpu.phaseTiming == dtbench::run::PhaseTiming::kEvents);
  CHECK(old.gpu.cudnnBenchmark);
  CHECK_FALSE(old.gpu.cudaGraph);
}

TEST_CASE("a CUDA graph of the step is refused where it cannot be captured, naming the reason", "[config][cuda_graph]") {
  RunConfig c = valid();
  c.gpu.cudaGraph = true;
  CHECK_THAT(errorOf(c), Catch::Contains("--cuda-graph") && Catch::Contains("--device cuda"));
  c.device = DeviceKind::kCuda;
  const auto refusal = [](RunConfig config, auto change) {
    change(config);
    return errorOf(config);
  };
  CHECK_THAT(refusal(c, [](RunConfig& r) { r.mode = ParallelMode::kDp; }), Catch::Contains("--mode dp"));
  CHECK_THAT(refusal(c,
                     [](RunConfig& r) {
                       r.comm.connection.worldSize = 2;
                       r.comm.connection.backend = dtbench::comm::Backend::kGloo;
                     }),
             Catch::Contains("--backend gloo") && Catch::Contains("--backend nccl"));
  CHECK_THAT(refusal(c,
                     [](RunConfig& r) {
                       r.comm.connection.worldSize = 2;
                       r.comm.connection.backend = dtbench::comm::Backend::kMpi;
                     }),
             Catch::Contains("--backend mpi"));
  CHECK_THAT(refusal(c,
                     [](RunConfig& r) {
                       r.comm.connection.worldSize = 2;
                       r.comm.connection.backend = dtbench::comm::Backend::kNccl;
                       r.sync.kind = Sync::kPairavg;
                     }),
             Catch::Contains("--sync pairavg"));
  CHECK_THAT(refusal(c,
                     [](RunConfig& r) {
                       r.comm.connection.worldSize = 2;
                       r.comm.connection.backend = dtbench::comm::Backend::kNccl;
                       r.comm.topology = dtbench::comm::Topology::parse("ring");
                     }),
             Catch::Contains("--topology ring") && Catch::Contains("native"));
  CHECK_THAT(refusal(c, [](RunConfig& r) { r.precision.amp = Amp::kFp16; }), Catch::Contains("--amp fp16"));
  CHECK_THAT(refusal(c, [](RunConfig& r) { r.gpu.phaseTiming = dtbench::run::PhaseTiming::kSync; }),
             Catch::Contains("--phase-timing sync"));
  CHECK_THAT(refusal(c,
                     [](RunConfig& r) {
                       r.comm.connection.worldSize = 2;
                       r.comm.connection.backend = dtbench::comm::Backend::kNccl;
                     }),
             Catch::Contains("2 ranks") && Catch::Contains("not built"));
  CHECK_THAT(refusal(c, [](RunConfig& r) { r.optimizer.kind = dtbench::run::OptimizerKind::kAdam; }),
             Catch::Contains("--optimizer adam") && Catch::Contains("--optimizer sgd"));
  // Where nothing above holds, one rank's step is captured: accepted by a CUDA build.
  if (DTBENCH_TORCH_HAS_CUDA)
    CHECK(errorOf(c).empty());
  else
    CHECK_THAT(errorOf(c), Catch::Contains("no CUDA"));
}
