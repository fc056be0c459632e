#pragma once
// The subcommands of `dtbench`. Each takes the words after its name and returns the process's
// exit code; errors propagate as exceptions for main() to report (UsageError -> 2, others -> 1).

#include <string>
#include <vector>

namespace dtbench::experiments {

int runTrainCommand(const std::vector<std::string>& args);
int runModelsCommand(const std::vector<std::string>& args);
int runLaunchCommand(const std::vector<std::string>& args);
int runAllreduceCommand(const std::vector<std::string>& args);
int runReportCommand(const std::vector<std::string>& args);
int runSweepCommand(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
