#pragma once
// The command line of run/config_schema.h's rows: a row's flag as a cxxopts option (its type, help and
// default) and, after the parse, its value in config.json's terms for the row's set(). Used by
// `dtbench train` (every row) and by the rank flags every multi-rank subcommand shares.

#include <optional>
#include <string>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "run/config_schema.h"

namespace dtbench::experiments {

// Adds `setting`'s flag to `options` under its group, showing `defaultText` ("" shows none: the
// option then has a value only when given).
void addSettingOption(cxxopts::Options& options, const run::Setting& setting, const std::string& defaultText);

// The flag's value (the given one, else its default), as config.json would hold it; a switch is
// present or not; nothing for a flag that was not given and has no default.
std::optional<nlohmann::json> settingValue(const cxxopts::ParseResult& parsed, const run::Setting& setting);

// "lr" for "--lr": the name cxxopts knows a flag by.
std::string optionName(const run::Setting& setting);

}  // namespace dtbench::experiments
