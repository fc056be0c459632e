#pragma once
// The command line of `dtbench launch` (launch_command.cpp): its flags before `--`, the command after.

#include <string>
#include <vector>

#include "experiments/launch/launch_supervisor.h"

namespace dtbench::experiments {

struct LaunchCommandLine {
  LaunchOptions launch;  // the defaults: LaunchOptions' member initializers
  bool help = false;
  std::string helpText;
};

// Throws common::UsageError naming the bad flag: -n missing, a value out of its range, no command
// after '--'.
LaunchCommandLine parseLaunchOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
