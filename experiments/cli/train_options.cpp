#include "experiments/cli/train_options.h"

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "comm/backends/backend.h"
#include "common/cluster_file.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/rank_options.h"
#include "experiments/cli/setting_options.h"
#include "models/registry.h"
#include "run/config_schema.h"

namespace dtbench::experiments {

namespace {

// Every flag of dtbench train: the rows of run/config_schema.h, in their order, with their help and
// the defaults of a default-built RunConfig.
cxxopts::Options trainOptions() {
  cxxopts::Options options(
      "dtbench train",
      "Train one model, one process per rank (data-parallel), and write a run directory (rank 0 writes it).");
  options.set_width(100);
  for (const run::Setting& setting : run::settings()) {
    if (setting.flag.empty() || setting.rankFlag) continue;
    run::Setting shown = setting;
    // The zoo's names come from the models' registry, which needs LibTorch: the one row told here.
    if (setting.key == "model") shown.help += ": " + common::joinList(models::modelNames());
    addSettingOption(options, shown, setting.defaultText());
  }
  options.add_options("Output")("h,help", "Show this help");
  addRankOptions(options, run::RunConfig{}.comm.connection);
  return options;
}

}  // namespace

ValueKind trainFlagKind(const std::string& name) {
  cxxopts::Options options = trainOptions();
  return valueKind(options, "--" + name);
}

TrainCommandLine parseTrainOptions(const std::vector<std::string>& args, const comm::Environment& env) {
  cxxopts::Options options = trainOptions();
  const ParsedOptions parsed = parseOptions(options, "train", args);
  TrainCommandLine result;
  if (parsed.help) {
    result.help = true;
    result.helpText = parsed.helpText;
    return result;
  }
  const cxxopts::ParseResult& p = parsed.result;
  run::RunConfig& c = result.config;
  try {
    for (const run::Setting& setting : run::settings()) {
      if (setting.flag.empty() || setting.rankFlag) continue;
      const std::optional<nlohmann::json> value = settingValue(p, setting);
      if (!value) continue;
      setting.set(c, *value);
      // A value given where the default depends on other settings is checked as given: resolveDefaults
      // replaces only the absent ones.
      if (!setting.defaultShown) run::checkRule(setting, c);
    }
    const RankOptions ranks = readRankOptions(p, env, c.comm.connection.backend);
    c.comm.connection = ranks.connection;
    c.comm.ranksPerHost = ranks.ranksPerHost;
    c.commandLine.assign(args.begin(), args.end());
    c.commandLine.insert(c.commandLine.begin(), {"dtbench", "train"});
  } catch (const cxxopts::exceptions::exception& e) {
    throwUsage("train", e.what());
  }
  c = run::resolveDefaults(c);
  trainer::validate(c);
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
