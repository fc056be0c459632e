#pragma once
// The subcommands of `dtbench`, as one table: name, the line `dtbench --help` shows, and the
// function that runs it. Each takes the words after its name and returns the process's exit code;
// errors propagate as exceptions for main() to report (common::UsageError -> 2, others -> 1).

#include <string>
#include <vector>

namespace dtbench::experiments {

int runTrainCommand(const std::vector<std::string>& args);
int runModelsCommand(const std::vector<std::string>& args);
int runLaunchCommand(const std::vector<std::string>& args);
int runAllreduceCommand(const std::vector<std::string>& args);
int runReportCommand(const std::vector<std::string>& args);
int runSweepCommand(const std::vector<std::string>& args);
int runPredictCommand(const std::vector<std::string>& args);
int runCaptureCommand(const std::vector<std::string>& args);
int runAuditCommand(const std::vector<std::string>& args);
int runStatusCommand(const std::vector<std::string>& args);

struct Subcommand {
  const char* name;
  const char* summary;  // may hold line breaks
  int (*run)(const std::vector<std::string>& args);
};

// In the order `dtbench --help` lists them.
const std::vector<Subcommand>& subcommands();

}  // namespace dtbench::experiments
