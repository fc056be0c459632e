#pragma once
// The command line of `dtbench train`: parsed once into the RunConfig that the trainer gets. Every
// closed set of names (--dataset, --device, --optimizer, --amp, --backend, --topology, --sync,
// --mode) becomes its enum here, so an unknown name is refused before anything starts.

#include <string>
#include <vector>

#include "comm/rank_discovery.h"
#include "experiments/cli/command_line.h"
#include "trainer/config.h"

namespace dtbench::experiments {

struct TrainCommandLine {
  bool help = false;
  std::string helpText;
  trainer::RunConfig config;
};

// `args` are the words after `dtbench train`; `env` supplies the launcher's variables (rank
// discovery), GLOO_SOCKET_IFNAME and DTBENCH_RANKS_PER_HOST. Throws common::UsageError for unknown
// flags, malformed values and values that cannot work (the message names the flag).
TrainCommandLine parseTrainOptions(const std::vector<std::string>& args, const comm::Environment& env = {});

// What the dtbench train flag --`name` takes (kUnknown when there is no such flag); dtbench sweep
// asks it about its grid keys.
ValueKind trainFlagKind(const std::string& name);

}  // namespace dtbench::experiments
