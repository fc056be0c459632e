#include "experiments/cli/command_line.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "common/usage_error.h"

namespace dtbench::experiments {
namespace {

cxxopts::ParseResult parseWords(cxxopts::Options& options, const std::string& program,
                                const std::vector<std::string>& words) {
  std::vector<const char*> argv{program.c_str()};
  for (const std::string& w : words) argv.push_back(w.c_str());
  return options.parse(static_cast<int>(argv.size()), argv.data());
}

// The help entry of `flag` ("--lr", "-b", or a bare long name), if `options` has one.
std::optional<cxxopts::HelpOptionDetails> detailsOf(const cxxopts::Options& options, const std::string& flag) {
  std::string name = flag;
  while (!name.empty() && name.front() == '-') name.erase(0, 1);
  const bool isShort = flag.size() == 2 && flag[0] == '-';
  for (const std::string& group : options.groups())
    for (const cxxopts::HelpOptionDetails& o : options.group_help(group).options) {
      if (isShort ? o.s == name : std::find(o.l.begin(), o.l.end(), name) != o.l.end()) return o;
    }
  return std::nullopt;
}

// "-b (--min-bytes)" for a short flag, the flag itself otherwise.
std::string displayName(const cxxopts::Options& options, const std::string& flag) {
  const auto details = detailsOf(options, flag);
  if (flag.size() == 2 && flag[0] == '-' && details && !details->l.empty())
    return flag + " (--" + details->l.front() + ")";
  return flag;
}

// A decimal number, as cxxopts' operator>> reads it to the end: strtod alone would also take the
// hexadecimal "0x1p3", of which operator>> reads only the 0.
bool isFiniteNumber(const std::string& text) {
  if (text.empty() || text.find_first_of("xXpP") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && std::isfinite(value);
}

std::string badValue(const cxxopts::Options& options, const std::string& flag, ValueKind kind,
                     const std::string& value) {
  std::string expected;
  switch (kind) {
    case ValueKind::kNumber: expected = "takes a finite number such as 0.1 or 1e-3"; break;
    case ValueKind::kInteger: expected = "takes a whole number"; break;
    case ValueKind::kCount: expected = "takes a whole number >= 0"; break;
    case ValueKind::kSwitch: expected = "takes no value"; break;
    case ValueKind::kText:
    case ValueKind::kUnknown: expected = "cannot take this value"; break;
  }
  return displayName(options, flag) + " " + expected + ", got '" + value + "'";
}

// cxxopts reads values as it meets them and says only "Argument 'nan' failed to parse". The
// shortest prefix of `args` that fails so ends with the bad value: as "--flag=value", as the word
// after "--flag", or attached to a short flag ("-bx").
std::string describeBadValue(cxxopts::Options& options, const std::string& program,
                             const std::vector<std::string>& args, const std::string& fallback) {
  for (size_t k = 1; k <= args.size(); ++k) {
    try {
      parseWords(options, program, std::vector<std::string>(args.begin(), args.begin() + static_cast<long>(k)));
      continue;
    } catch (const cxxopts::exceptions::incorrect_argument_type&) {
    } catch (const cxxopts::exceptions::exception&) {
      continue;
    }
    const std::string& word = args[k - 1];
    std::string flag, value;
    const std::string previous = k >= 2 ? args[k - 2] : "";
    const bool afterFlag = !previous.empty() && previous[0] == '-' && previous.find('=') == std::string::npos &&
                           valueKind(options, previous) != ValueKind::kSwitch &&
                           valueKind(options, previous) != ValueKind::kUnknown;
    if (word.rfind("--", 0) == 0 && word.find('=') != std::string::npos) {
      flag = word.substr(0, word.find('='));
      value = word.substr(word.find('=') + 1);
    } else if (afterFlag) {
      flag = previous;
      value = word;
    } else if (word.size() > 2 && word[0] == '-' && word[1] != '-') {
      flag = word.substr(0, 2);
      value = word.substr(2);
    } else {
      return fallback;
    }
    return badValue(options, flag, valueKind(options, flag), value);
  }
  return fallback;
}

}  // namespace

ValueKind valueKind(cxxopts::Options& options, const std::string& flag) {
  const auto details = detailsOf(options, flag);
  if (!details) return ValueKind::kUnknown;
  if (details->is_boolean) return ValueKind::kSwitch;
  const auto accepts = [&](const std::string& sample) {
    const std::string word = details->l.empty() ? "-" + details->s + sample : "--" + details->l.front() + "=" + sample;
    try {
      parseWords(options, "probe", {word});
      return true;
    } catch (const cxxopts::exceptions::exception&) {
      return false;
    }
  };
  if (accepts("x")) return ValueKind::kText;
  if (accepts("0.5")) return ValueKind::kNumber;
  if (accepts("-1")) return ValueKind::kInteger;
  if (accepts("1")) return ValueKind::kCount;
  return ValueKind::kUnknown;
}

void throwUsage(const std::string& subcommand, const std::string& problem) {
  throw common::UsageError(problem + "; see dtbench " + subcommand + " --help");
}

ParsedOptions parseOptions(cxxopts::Options& options, const std::string& subcommand,
                           const std::vector<std::string>& args, const std::string& hint) {
  const std::string program = "dtbench " + subcommand;
  ParsedOptions parsed;
  try {
    parsed.result = parseWords(options, program, args);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    throwUsage(subcommand, describeBadValue(options, program, args, e.what()));
  } catch (const cxxopts::exceptions::no_such_option& e) {
    throwUsage(subcommand, std::string(e.what()) + (hint.empty() ? "" : "; " + hint));
  } catch (const cxxopts::exceptions::exception& e) {
    throwUsage(subcommand, e.what());
  }
  if (parsed.result.count("help")) {
    parsed.help = true;
    parsed.helpText = options.help();
    return parsed;
  }
  // A flag given without its value takes the next flag as one ("--cudnn-benchmark --out DIR" reads
  // "--out" as the benchmark's value and leaves DIR over): name the flag that lacks its value. Only a
  // value that is a bare flag of this command: "--sbatch-args --constraint=a100" passes words on.
  for (const cxxopts::KeyValue& argument : parsed.result.arguments())
    if (const std::string& value = argument.value();
        value.rfind("--", 0) == 0 && value.find_first_of("= \t") == std::string::npos && detailsOf(options, value))
      throwUsage(subcommand, "--" + argument.key() + " needs a value before " + argument.value() +
                                 (argument.key().size() == 1 ? "" : " (e.g. --" + argument.key() + " VALUE)"));
  if (!parsed.result.unmatched().empty())
    throwUsage(subcommand,
               "unexpected argument '" + parsed.result.unmatched().front() + "'" + (hint.empty() ? "" : "; " + hint));
  for (const cxxopts::KeyValue& argument : parsed.result.arguments()) {
    const std::string flag = "--" + argument.key();
    if (argument.value().empty())
      throwUsage(subcommand, flag + " needs a value, got an empty one; leave the flag out for its default");
    // cxxopts reads a double with operator>>, which stops at the first character it cannot use.
    if (valueKind(options, flag) == ValueKind::kNumber && !isFiniteNumber(argument.value()))
      throwUsage(subcommand, badValue(options, flag, ValueKind::kNumber, argument.value()));
  }
  return parsed;
}

ParsedRunDirectory parseRunDirectoryOptions(cxxopts::Options& options, const std::string& subcommand,
                                            const std::vector<std::string>& args) {
  options.add_options()("directory", "The run directory", cxxopts::value<std::vector<std::string>>())(
      "h,help", "Show this help");
  options.parse_positional({"directory"});
  options.positional_help("RUNDIR");
  ParsedRunDirectory parsed;
  static_cast<ParsedOptions&>(parsed) = parseOptions(options, subcommand, args);
  if (parsed.help) return parsed;
  if (!parsed.result.count("directory"))
    throwUsage(subcommand, "name the run directory, e.g. dtbench " + subcommand + " runs/r18");
  const auto directories = parsed.result["directory"].as<std::vector<std::string>>();
  if (directories.size() != 1)
    throwUsage(subcommand, "name one run directory at a time, got " + std::to_string(directories.size()));
  parsed.directory = directories.front();
  return parsed;
}

}  // namespace dtbench::experiments
