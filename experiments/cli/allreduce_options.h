#pragma once
// The command line of `dtbench allreduce` (allreduce_command.cpp), parsed once into the
// benchmark's settings (experiments/allreduce/allreduce_benchmark.h) and this rank's options.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/rank_discovery.h"
#include "experiments/allreduce/allreduce_benchmark.h"
#include "experiments/cli/rank_options.h"

namespace dtbench::experiments {

struct AllreduceOptions {
  AllreduceSettings settings;
  RankOptions ranks;  // backend, who this rank is, rendezvous, Gloo, --ranks-per-host, --timeout
  bool everyTopology = false;  // --topology all: every topology the backend runs
  bool help = false;
  std::string helpText;
};

// `env` supplies the launcher's variables (rank discovery), GLOO_SOCKET_IFNAME and
// DTBENCH_RANKS_PER_HOST (set by dtbench launch) as defaults. Throws common::UsageError naming the
// bad flag.
AllreduceOptions parseAllreduceOptions(const std::vector<std::string>& args, const comm::Environment& env);

// "4K" -> 4096, "64M", "1G", "123": bytes (K = 1024). Throws common::UsageError naming `flag`.
int64_t parseBytes(const std::string& flag, const std::string& text);

}  // namespace dtbench::experiments
