#include "experiments/rank_options.h"

#include <cstdlib>
#include <stdexcept>

#include "trainer/config.h"

namespace dtbench::experiments {

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
    ("gloo-threads", "Gloo worker threads", cxxopts::value<int>()->default_value("2"))
    ("timeout", "Seconds any one collective may take before the run fails, naming the rank it waited for",
     cxxopts::value<double>()->default_value(std::to_string(static_cast<int>(defaultTimeoutS))));
  // clang-format on
}

RankFlags readRankOptions(const cxxopts::ParseResult& parsed, const comm::Environment& env) {
  RankFlags f;
  if (parsed.count("rank")) f.rank.rank = parsed["rank"].as<int>();
  if (parsed.count("world-size")) f.rank.worldSize = parsed["world-size"].as<int>();
  if (parsed.count("master-addr")) f.rank.masterAddr = parsed["master-addr"].as<std::string>();
  if (parsed.count("master-port")) f.rank.masterPort = parsed["master-port"].as<int>();
  if (parsed.count("store-path")) f.storePath = parsed["store-path"].as<std::string>();
  if (parsed.count("gloo-iface")) f.glooIface = parsed["gloo-iface"].as<std::string>();
  else if (auto it = env.find("GLOO_SOCKET_IFNAME"); it != env.end()) f.glooIface = it->second;
  f.glooThreads = parsed["gloo-threads"].as<int>();
  if (f.glooThreads < 1) throw trainer::UsageError("--gloo-threads must be at least 1");
  if (parsed.count("ranks-per-host")) {
    f.ranksPerHost = parsed["ranks-per-host"].as<int>();
    if (f.ranksPerHost < 1) throw trainer::UsageError("--ranks-per-host must be at least 1");
  } else if (auto it = env.find("DTBENCH_RANKS_PER_HOST"); it != env.end()) {
    f.ranksPerHost = std::atoi(it->second.c_str());
  }
  f.timeoutS = parsed["timeout"].as<double>();
  if (!(f.timeoutS > 0)) throw trainer::UsageError("--timeout must be positive (seconds)");
  return f;
}

comm::BackendOptions backendOptions(const std::string& backend, const RankFlags& flags, const comm::RankInfo& who) {
  comm::BackendOptions options;
  options.backend = backend;
  options.rank = who.rank;
  options.worldSize = who.worldSize;
  options.masterAddr = who.masterAddr;
  options.masterPort = who.masterPort;
  options.storePath = flags.storePath;
  options.glooIface = flags.glooIface;
  options.glooThreads = flags.glooThreads;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.timeoutS * 1000.0));
  return options;
}

comm::RankInfo discoverRankOrExplain(const RankFlags& flags, const comm::Environment& env) {
  try {
    return comm::discoverRank(flags.rank, env);
  } catch (const std::invalid_argument& e) {
    throw trainer::UsageError(e.what());
  }
}

}  // namespace dtbench::experiments
