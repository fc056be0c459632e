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
  return parseRunDirectoryRows(options, "status", args, statusRows());
}

}  // namespace dtbench::experiments
