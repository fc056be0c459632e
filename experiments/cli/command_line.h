#pragma once
// The parse every subcommand's options go through (cxxopts), so that they all say the same things
// the same way: a cxxopts error, a word that is no option, or a bad value is a common::UsageError
// ending in "; see dtbench <subcommand> --help" (exit code 2), and -h/--help returns the help text.

#include <string>
#include <vector>

#include <cxxopts.hpp>

namespace dtbench::experiments {

struct ParsedOptions {
  bool help = false;
  std::string helpText;  // with help
  cxxopts::ParseResult result;
};

// Parses `args`, the words after `dtbench <subcommand>`, with `options` (which must define
// "h,help"). Words that are not options are refused, saying `hint` when one is given (e.g. where
// such words belong), unless `options` takes them as positional arguments.
ParsedOptions parseOptions(cxxopts::Options& options, const std::string& subcommand,
                           const std::vector<std::string>& args, const std::string& hint = "");

// A common::UsageError for `problem` in `dtbench <subcommand>`: "<problem>; see dtbench <subcommand> --help".
[[noreturn]] void throwUsage(const std::string& subcommand, const std::string& problem);

}  // namespace dtbench::experiments
