#include "experiments/cli/status_options.h"

#include <cxxopts.hpp>

#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"

namespace dtbench::experiments {
namespace {

using StatusRow = OptionRow<StatusOptions>;

// `dtbench status`'s flags (RUNDIR is positional).
const std::vector<StatusRow>& statusRows() {
  static const std::vector<StatusRow> rows{
      {"json", "",
       "Print {\"status\", \"ended\", \"complete\", \"continuable\", \"exit_code\"}: the outcome and what it means "
       "(run/run_outcome.h; null where the outcome is unknown)",
       ValueKind::kSwitch, nullptr,
       [](StatusOptions& o, const cxxopts::OptionValue&, const std::string&) { o.json = true; }},
  };
  return rows;
}

}  // namespace

StatusOptions parseStatusOptions(const std::vector<std::string>& args) {
  StatusOptions o;
  cxxopts::Options options(
      "dtbench status",
      "Prints how a run stands or ended, as its summary.json records it: running, completed, interrupted or\n"
      "failed, or unknown for a run directory without summary.json (a run killed before its first write);\n"
      "docs/run-directory.md, \"summary.json\". A run killed without recording its end still reads running.\n"
      "Scripts ask it instead of reading summary.json themselves.\n"
      "Exit 0: printed; 1: summary.json cannot be read or its status names no outcome; 2: usage error (no\n"
      "RUNDIR, not a directory, or a directory that holds no run: neither config.json nor summary.json).\n\n"
      "Synopsis: dtbench status [--json] RUNDIR");
  options.set_width(100);
  addOptionRows(options, statusRows());
  options.add_options()("directory", "The run directory", cxxopts::value<std::vector<std::string>>())(
      "h,help", "Show this help");
  options.parse_positional({"directory"});
  options.positional_help("RUNDIR");
  const ParsedOptions result = parseOptions(options, "status", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  const cxxopts::ParseResult& parsed = result.result;
  if (!parsed.count("directory")) throwUsage("status", "name the run directory, e.g. dtbench status runs/r18");
  const auto directories = parsed["directory"].as<std::vector<std::string>>();
  if (directories.size() != 1)
    throwUsage("status", "name one run directory at a time, got " + std::to_string(directories.size()));
  o.directory = directories.front();
  try {
    applyOptionRows(parsed, statusRows(), o);
  } catch (const common::UsageError& e) {
    throwUsage("status", e.what());
  }
  return o;
}

}  // namespace dtbench::experiments
