#pragma once
// RunConfig: the one configuration of a training run. Parsed once from the command line
// (experiments/train_options.cpp), validated here, passed down by const reference, and written
// whole into the run directory's config.json. No other global or mutable configuration exists.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

  // Where results go.
  std::string outDir;
  bool quiet = false;
  std::vector<std::string> commandLine;  // as typed, for config.json
};

const std::vector<std::string>& datasetNames();
const std::vector<std::string>& optimizerNames();

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
