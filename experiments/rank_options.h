#pragma once
// The command-line flags every multi-rank subcommand shares (train, allreduce): who this rank is,
// where the rendezvous happens, and how Gloo and the deadline are set. Defaults come from the
// launcher's variables (comm/rank_discovery.h), GLOO_SOCKET_IFNAME and DTBENCH_RANKS_PER_HOST.

#include <string>

#include <cxxopts.hpp>

#include "comm/backend.h"
#include "comm/rank_discovery.h"

namespace dtbench::experiments {

struct RankFlags {
  comm::ExplicitRank rank;
  std::string storePath;
  std::string glooIface;
  int glooThreads = 2;
  int ranksPerHost = 0;  // 0: hosts from the real host names
  double timeoutS = 60;
};

// Adds the group "Ranks and rendezvous" with --timeout defaulting to `defaultTimeoutS`.
void addRankOptions(cxxopts::Options& options, double defaultTimeoutS);

// Throws trainer::UsageError naming the bad flag.
RankFlags readRankOptions(const cxxopts::ParseResult& parsed, const comm::Environment& env);

// The communicator's options for `backend` from the flags and the discovered rank.
comm::BackendOptions backendOptions(const std::string& backend, const RankFlags& flags, const comm::RankInfo& who);

// discoverRank with its errors as trainer::UsageError.
comm::RankInfo discoverRankOrExplain(const RankFlags& flags, const comm::Environment& env);

}  // namespace dtbench::experiments
