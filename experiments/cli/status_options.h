#pragma once
// The command line of `dtbench status` (status_command.cpp), parsed once into one struct:
//   dtbench status [--json] RUNDIR

#include <string>
#include <vector>

namespace dtbench::experiments {

struct StatusOptions {
  std::string directory;  // the run directory
  bool json = false;      // --json: the outcome and its facts as one JSON object
  bool help = false;
  std::string helpText;
};

// Throws common::UsageError naming the bad flag, or saying that RUNDIR is missing.
StatusOptions parseStatusOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
