#pragma once
// The parse every subcommand's options go through (cxxopts), so that they all say the same things
// the same way: a cxxopts error, a word that is no option, or a bad value is a common::UsageError
// ending in "; see dtbench <subcommand> --help" (exit code 2), and -h/--help returns the help text.
//
// Values are checked alike for every subcommand:
//  - a value that does not read as its flag's type names the flag, the value and the type
//    ("--lr takes a finite number such as 0.1 or 1e-3, got 'nan'"); cxxopts alone says only
//    "Argument 'nan' failed to parse";
//  - a number must be all of the word (cxxopts reads "0.1x" as 0.1) and finite (nan, inf and
//    values beyond the range of a double are refused);
//  - an empty value ("--data-dir ''") is refused rather than taken as "use the default".

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

// The parse of a subcommand whose one positional word is a run directory (dtbench status RUNDIR,
// dtbench audit RUNDIR): adds RUNDIR and -h/--help to `options`, parses `args` as parseOptions
// does, and refuses no directory or more than one. `directory` is empty with help.
struct ParsedRunDirectory : ParsedOptions {
  std::string directory;
};
ParsedRunDirectory parseRunDirectoryOptions(cxxopts::Options& options, const std::string& subcommand,
                                            const std::vector<std::string>& args);

// What a flag of `options` takes, found by asking cxxopts to read sample values.
enum class ValueKind {
  kUnknown,  // not a flag of `options`
  kSwitch,   // no value (--check)
  kText,     // any word
  kInteger,  // a whole number
  kCount,    // a whole number >= 0 (an unsigned type)
  kNumber,   // a real number
};

// `flag` as written on a command line: "--lr", "-b".
ValueKind valueKind(cxxopts::Options& options, const std::string& flag);

// A common::UsageError for `problem` in `dtbench <subcommand>`: "<problem>; see dtbench <subcommand> --help".
[[noreturn]] void throwUsage(const std::string& subcommand, const std::string& problem);

}  // namespace dtbench::experiments
