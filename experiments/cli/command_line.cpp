#include "experiments/cli/command_line.h"

#include "common/usage_error.h"

namespace dtbench::experiments {

void throwUsage(const std::string& subcommand, const std::string& problem) {
  throw common::UsageError(problem + "; see dtbench " + subcommand + " --help");
}

ParsedOptions parseOptions(cxxopts::Options& options, const std::string& subcommand,
                           const std::vector<std::string>& args, const std::string& hint) {
  const std::string program = "dtbench " + subcommand;
  std::vector<const char*> argv{program.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  ParsedOptions parsed;
  try {
    parsed.result = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    throwUsage(subcommand, e.what());
  }
  if (parsed.result.count("help")) {
    parsed.help = true;
    parsed.helpText = options.help();
    return parsed;
  }
  if (!parsed.result.unmatched().empty())
    throwUsage(subcommand,
               "unexpected argument '" + parsed.result.unmatched().front() + "'" + (hint.empty() ? "" : "; " + hint));
  return parsed;
}

}  // namespace dtbench::experiments
