#pragma once
// The command-line flags every multi-rank subcommand shares (train, allreduce): who this rank is,
// where the rendezvous happens, how Gloo and the deadline are set, and the host layout. Defaults
// come from the launcher's variables (comm/rank_discovery.h), GLOO_SOCKET_IFNAME,
// DTBENCH_RANKS_PER_HOST and DTBENCH_MESSAGE_LOG. They fill the communicator's own options
// (comm::BackendOptions), the one home of these settings.

#include <cxxopts.hpp>

#include "comm/backends/backend.h"
#include "comm/backends/make_communicator.h"
#include "comm/rank_discovery.h"

namespace dtbench::experiments {

// The most Gloo worker threads a rank may ask for. Each runs queued collectives; dtbench issues one
// at a time, so a few suffice, and a count in the thousands would only hang the rank starting them.
constexpr int kMaxGlooThreads = 64;

struct RankOptions {
  comm::BackendOptions connection;  // backend, the discovered rank and world, rendezvous, Gloo, --timeout
  int ranksPerHost = 0;             // 0: hosts from the real host names
};

// Adds the group "Ranks and rendezvous" with --timeout defaulting to `defaultTimeoutS`.
void addRankOptions(cxxopts::Options& options, double defaultTimeoutS);

// The flags of addRankOptions for `backend` (--backend, parsed by the caller), with the rank and
// world discovered from the flags and `env`. Throws common::UsageError naming the bad flag, or the
// launcher variables that disagree.
RankOptions readRankOptions(const cxxopts::ParseResult& parsed, const comm::Environment& env, comm::Backend backend);

}  // namespace dtbench::experiments
