#include "experiments/cli/rank_options.h"

#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/whole_number.h"
#include "common/usage_error.h"
#include "experiments/cli/setting_options.h"
#include "run/config_schema.h"

namespace dtbench::experiments {

using common::UsageError;

namespace {

// A RunConfig holding `connection` and `ranksPerHost`: what the rank rows read and write.
run::RunConfig holding(const comm::BackendOptions& connection, int ranksPerHost) {
  run::RunConfig config;
  config.comm.connection = connection;
  config.comm.ranksPerHost = ranksPerHost;
  return config;
}

}  // namespace

void addRankOptions(cxxopts::Options& options, const comm::BackendOptions& defaults) {
  const run::RunConfig config = holding(defaults, 0);
  for (const run::Setting& setting : run::settings()) {
    if (!setting.rankFlag) continue;
    std::string defaultText;
    if (setting.defaultShown) defaultText = run::valueText(setting.get(config));
    addSettingOption(options, setting, defaultText);
  }
}

RankOptions readRankOptions(const cxxopts::ParseResult& parsed, const comm::Environment& env, comm::Backend backend) {
  // The flags into a RunConfig through their rows (each row's type and rule); then what the
  // launcher's variables add, and the rank and world discovered from both.
  run::RunConfig given;
  for (const run::Setting& setting : run::settings()) {
    if (!setting.rankFlag) continue;
    if (const std::optional<nlohmann::json> value = settingValue(parsed, setting)) setting.set(given, *value);
  }
  comm::BackendOptions& c = given.comm.connection;
  comm::ExplicitRank explicitRank;
  if (parsed.count("rank")) explicitRank.rank = c.rank;
  if (parsed.count("world-size")) explicitRank.worldSize = c.worldSize;
  if (parsed.count("master-addr")) explicitRank.masterAddr = c.masterAddr;
  if (parsed.count("master-port")) explicitRank.masterPort = c.masterPort;

  c.backend = backend;
  if (!parsed.count("gloo-iface"))
    if (auto it = env.find("GLOO_SOCKET_IFNAME"); it != env.end()) c.glooIface = it->second;
  if (parsed.count("ranks-per-host")) {
    run::checkRule(*run::findSettingByFlag("--ranks-per-host"), given);  // >= 0, 0 = real host names
  } else if (auto it = env.find("DTBENCH_RANKS_PER_HOST"); it != env.end()) {
    // The launcher's variable, named as itself: no flag was given.
    const std::string& text = it->second;
    const long long value = common::wholeNumber(text).value_or(-1);
    if (value < 0 || value > std::numeric_limits<int>::max())
      throw UsageError("DTBENCH_RANKS_PER_HOST must be a whole number >= 0 (ranks per emulated host; 0 = real host "
                       "names), got '" + text + "': dtbench launch --ranks-per-host K sets it; unset it or fix it");
    given.comm.ranksPerHost = static_cast<int>(value);
  }
  if (!parsed.count("message-log"))
    if (auto it = env.find("DTBENCH_MESSAGE_LOG"); it != env.end()) c.messageLog = it->second;
  for (const char* flag : {"--gloo-threads", "--timeout"}) run::checkRule(*run::findSettingByFlag(flag), given);

  comm::RankInfo who;
  try {
    who = comm::discoverRank(explicitRank, env);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  c.rank = who.rank;
  c.worldSize = who.worldSize;
  c.localRank = who.localRank;
  c.masterAddr = who.masterAddr;
  c.masterPort = who.masterPort;
  return RankOptions{c, given.comm.ranksPerHost};
}

}  // namespace dtbench::experiments
