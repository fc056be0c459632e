#pragma once
// OptionRow<Settings>: one flag of a subcommand as a row — its cxxopts name, help group, help, what
// it takes, how its default shows (read from a default-built Settings, so that no default is typed
// twice) and how a given value sets the Settings (parsing it and checking the flag's own rule, with a
// common::UsageError naming the flag). A subcommand keeps its rows in one table; `--help`, the
// defaults and the parse follow from it. `dtbench train`'s settings are run/config_schema.h's rows,
// which also write config.json; these rows are for the subcommands whose settings live only on the
// command line. Checks that involve several flags stay in the subcommand's parse, after the rows.
//
// Worked example (a `--warmup-iters N` of `dtbench allreduce`, default from AllreduceSettings):
//   {"warmup-iters", "Benchmark", "Untimed all-reduces per size", ValueKind::kInteger,
//    [](const Opts& o) { return std::to_string(o.settings.warmupIters); },
//    [](Opts& o, const cxxopts::OptionValue& v, const std::string& flag) {
//      o.settings.warmupIters = atLeast(flag, v.as<long long>(), 0); }}

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "common/usage_error.h"
#include "experiments/cli/command_line.h"

namespace dtbench::experiments {

template <typename Settings>
struct OptionRow {
  std::string name;   // cxxopts' spec: "check", or with a short flag "b,min-bytes"
  std::string group;  // the section of --help
  std::string help;
  ValueKind kind;     // kSwitch (no value), kText, kInteger (long long), kNumber (double)
  // The default as --help shows it, from a default-built Settings; nullptr: the flag has no default
  // (a value only when given).
  std::function<std::string(const Settings&)> shown;
  // Sets `settings` from the given value; `flag` ("--min-bytes") names it in errors.
  std::function<void(Settings& settings, const cxxopts::OptionValue& value, const std::string& flag)> set;
  std::string argument = {};  // what --help shows after the flag ("NAME"; "" shows cxxopts' "arg")
  bool required = false;  // a UsageError "--node NAME is required" when the flag is not given
  // A text flag that may be given more than once: its value is a std::vector<std::string> of every
  // word given (cxxopts also splits each at commas).
  bool repeated = false;

  // "min-bytes" of "b,min-bytes".
  std::string longName() const { return name.substr(name.find(',') + 1); }
};

// Adds every row's flag to `options` under its group, in the table's order.
template <typename Settings>
void addOptionRows(cxxopts::Options& options, const std::vector<OptionRow<Settings>>& rows) {
  const Settings defaults{};
  for (const OptionRow<Settings>& row : rows) {
    std::shared_ptr<cxxopts::Value> value;
    switch (row.kind) {
      case ValueKind::kSwitch: value = cxxopts::value<bool>(); break;
      case ValueKind::kInteger:
      case ValueKind::kCount: value = cxxopts::value<long long>(); break;
      case ValueKind::kNumber: value = cxxopts::value<double>(); break;
      case ValueKind::kText:
      case ValueKind::kUnknown: value = cxxopts::value<std::string>(); break;
    }
    if (row.repeated) value = cxxopts::value<std::vector<std::string>>();
    if (row.shown && row.kind != ValueKind::kSwitch) value->default_value(row.shown(defaults));
    options.add_option(row.group, cxxopts::Option(row.name, row.help, value, row.argument));
  }
}

// Sets `settings` from every row whose flag was given (the rest keep Settings' defaults).
template <typename Settings>
void applyOptionRows(const cxxopts::ParseResult& parsed, const std::vector<OptionRow<Settings>>& rows,
                     Settings& settings) {
  for (const OptionRow<Settings>& row : rows) {
    const std::string name = row.longName();
    if (parsed.count(name))
      row.set(settings, parsed[name], "--" + name);
    else if (row.required)
      throw common::UsageError("--" + name + (row.argument.empty() ? "" : " " + row.argument) + " is required");
  }
}

// The parse of a subcommand of one run directory and its rows (dtbench status, audit): `rows` added to
// `options`, RUNDIR (parseRunDirectoryOptions), then the rows applied. Settings has `directory`, `help` and
// `helpText`.
template <typename Settings>
Settings parseRunDirectoryRows(cxxopts::Options& options, const std::string& subcommand,
                               const std::vector<std::string>& args, const std::vector<OptionRow<Settings>>& rows) {
  Settings settings;
  addOptionRows(options, rows);
  const ParsedRunDirectory parsed = parseRunDirectoryOptions(options, subcommand, args);
  settings.help = parsed.help;
  settings.helpText = parsed.helpText;
  if (parsed.help) return settings;
  settings.directory = parsed.directory;
  applyOptionRows(parsed.result, rows, settings);
  return settings;
}

// A text flag's value.
inline std::string optionText(const cxxopts::OptionValue& value) { return value.as<std::string>(); }

// A repeated flag's values, every one given.
inline std::vector<std::string> optionTexts(const cxxopts::OptionValue& value) {
  return value.as<std::vector<std::string>>();
}

// 2 for 2.0, 1.5: a number as --help shows a default.
inline std::string numberText(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// `value`, or a common::UsageError "FLAG must be at least MIN, got VALUE".
inline long long atLeast(const std::string& flag, long long value, long long min) {
  if (value < min)
    throw common::UsageError(flag + " must be at least " + std::to_string(min) + ", got " + std::to_string(value));
  return value;
}

}  // namespace dtbench::experiments
