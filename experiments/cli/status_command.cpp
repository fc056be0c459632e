#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/usage_error.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/status_options.h"
#include "run/run_outcome.h"
#include "run/run_summary.h"

namespace dtbench::experiments {

// Exit 0 with the outcome printed; a directory that is no run a usage error (2); an unreadable summary.json
// an error (1).
int runStatusCommand(const std::vector<std::string>& args) {
  const StatusOptions o = parseStatusOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  std::optional<run::RunOutcome> outcome;
  try {
    outcome = run::readRunOutcome(o.directory);
  } catch (const std::invalid_argument& e) {
    throw common::UsageError(std::string(e.what()) + "; see dtbench status --help");
  }
  if (!o.json) {
    std::printf("%s\n", run::outcomeText(outcome).c_str());
    return 0;
  }
  nlohmann::json facts = {{"status", run::outcomeText(outcome)},
                          {"ended", nullptr},
                          {"complete", run::isComplete(outcome)},
                          {"continuable", run::isContinuable(outcome)},
                          {"exit_code", nullptr}};
  if (outcome) {
    facts["ended"] = run::factsOf(*outcome).ended;
    if (run::factsOf(*outcome).exitCode >= 0) facts["exit_code"] = run::factsOf(*outcome).exitCode;
  }
  std::printf("%s\n", facts.dump().c_str());
  return 0;
}

}  // namespace dtbench::experiments
