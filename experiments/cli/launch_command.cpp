#include <cstdio>
#include <string>
#include <vector>

#include "experiments/cli/commands.h"
#include "experiments/cli/launch_options.h"
#include "experiments/launch/launch_supervisor.h"

namespace dtbench::experiments {

int runLaunchCommand(const std::vector<std::string>& args) {
  const LaunchCommandLine o = parseLaunchOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  return superviseLaunch(o.launch);
}

}  // namespace dtbench::experiments
