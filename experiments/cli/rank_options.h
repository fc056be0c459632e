#pragma once
// The command-line flags every multi-rank subcommand shares (train, allreduce): who this rank is,
// where the rendezvous happens, how Gloo and the deadline are set, and the host layout. Their names,
// help, types and rules are rows of run/config_schema.h (rankFlag); defaults come from the launcher's
// variables (comm/rank_discovery.h), GLOO_SOCKET_IFNAME, DTBENCH_RANKS_PER_HOST and
// DTBENCH_MESSAGE_LOG. They fill the communicator's own options (comm::BackendOptions).

#include <cxxopts.hpp>

#include "comm/backends/backend.h"
#include "comm/backends/backend_options.h"
#include "comm/rank_discovery.h"

namespace dtbench::experiments {

struct RankOptions {
  comm::BackendOptions connection;  // backend, the discovered rank and world, rendezvous, Gloo, --timeout
  int ranksPerHost = 0;             // 0: hosts from the real host names
};

// Adds the group "Ranks and rendezvous": the rank flags of run/config_schema.h, with the defaults of
// `defaults` (train's RunConfig has a longer --timeout than allreduce's).
void addRankOptions(cxxopts::Options& options, const comm::BackendOptions& defaults);

// The flags of addRankOptions for `backend` (--backend, parsed by the caller), with the rank and
// world discovered from the flags and `env`. Throws common::UsageError naming the bad flag, or the
// launcher variables that disagree.
RankOptions readRankOptions(const cxxopts::ParseResult& parsed, const comm::Environment& env, comm::Backend backend);

}  // namespace dtbench::experiments
