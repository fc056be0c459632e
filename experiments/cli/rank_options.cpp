#include "experiments/cli/rank_options.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/usage_error.h"

namespace dtbench::experiments {

using common::UsageError;

void addRankOptions(cxxopts::Options& options, double defaultTimeoutS) {
  // clang-format off
  options.add_options("Ranks and rendezvous (default: torchrun, Open MPI or Slurm variables)")
    ("rank", "This rank", cxxopts::value<int>())
    ("world-size", "Number of ranks", cxxopts::value<int>())
    ("master-addr", "Rendezvous host (gloo)", cxxopts::value<std::string>())
    ("master-port", "Rendezvous port (gloo)", cxxopts::value<int>())
    ("store-path", "Rendezvous through a FileStore at this path instead (fresh per job attempt)",
     cxxopts::value<std::string>())
    ("ranks-per-host", "Emulate hosts of K ranks (default: DTBENCH_RANKS_PER_HOST, else real hostnames)",
     cxxopts::value<int>())
    ("gloo-iface", "Network interface for gloo (default: GLOO_SOCKET_IFNAME)", cxxopts::value<std::string>())
    ("gloo-threads", "Gloo worker threads (at most " + std::to_string(kMaxGlooThreads) + ")",
     cxxopts::value<int>()->default_value("2"))
    ("timeout", "Seconds any one collective may take before the run fails, naming the rank it waited for",
     cxxopts::value<double>()->default_value(std::to_string(static_cast<int>(defaultTimeoutS))))
    ("message-log", "Record every operation handed to the communicator and the rank's TCP sockets into "
     "DIR/messages.rank<R>.csv and DIR/sockets.rank<R>.csv (default: DTBENCH_MESSAGE_LOG; docs/wire.md)",
     cxxopts::value<std::string>(), "DIR");
  // clang-format on
}

RankOptions readRankOptions(const cxxopts::ParseResult& parsed, const comm::Environment& env, comm::Backend backend) {
  comm::ExplicitRank explicitRank;
  if (parsed.count("rank")) explicitRank.rank = parsed["rank"].as<int>();
  if (parsed.count("world-size")) explicitRank.worldSize = parsed["world-size"].as<int>();
  if (parsed.count("master-addr")) explicitRank.masterAddr = parsed["master-addr"].as<std::string>();
  if (parsed.count("master-port")) explicitRank.masterPort = parsed["master-port"].as<int>();

  RankOptions o;
  comm::BackendOptions& c = o.connection;
  c.backend = backend;
  if (parsed.count("store-path")) c.storePath = parsed["store-path"].as<std::string>();
  if (parsed.count("gloo-iface"))
    c.glooIface = parsed["gloo-iface"].as<std::string>();
  else if (auto it = env.find("GLOO_SOCKET_IFNAME"); it != env.end())
    c.glooIface = it->second;
  c.glooThreads = parsed["gloo-threads"].as<int>();
  if (c.glooThreads < 1 || c.glooThreads > kMaxGlooThreads)
    throw UsageError("--gloo-threads must be in [1, " + std::to_string(kMaxGlooThreads) + "], got " +
                     std::to_string(c.glooThreads));
  if (parsed.count("ranks-per-host")) {
    o.ranksPerHost = parsed["ranks-per-host"].as<int>();
    if (o.ranksPerHost < 1) throw UsageError("--ranks-per-host must be at least 1");
  } else if (auto it = env.find("DTBENCH_RANKS_PER_HOST"); it != env.end()) {
    o.ranksPerHost = std::atoi(it->second.c_str());
  }
  if (parsed.count("message-log"))
    c.messageLog = parsed["message-log"].as<std::string>();
  else if (auto it = env.find("DTBENCH_MESSAGE_LOG"); it != env.end())
    c.messageLog = it->second;
  c.timeoutS = parsed["timeout"].as<double>();
  if (!(c.timeoutS > 0)) throw UsageError("--timeout must be positive (seconds)");

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
  return o;
}

}  // namespace dtbench::experiments
