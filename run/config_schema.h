#pragma once
// The schema of a run's settings: one row per setting of `dtbench train`, and the one place where a
// setting's flag, config.json key, type, help, default, rule and agreement across ranks are typed.
// Everything else reads the rows:
//   - the command line: experiments/cli/train_options.cpp adds every row with a flag to `dtbench
//     train` (rank flags through experiments/cli/rank_options.cpp, which `dtbench allreduce` shares)
//     and sets the RunConfig from them;
//   - validation: checkRules() applies each row's rule (trainer/config.cpp adds what depends on several
//     settings, the machine or the build);
//   - config.json: settingsJson() writes every recorded row, readSettings() reads them back for the
//     report, predict and the sweep, an absent key taking its default (a run directory written before
//     a setting existed still reads);
//   - the ranks' agreement and --resume's check (trainer/config_agreement.h) take the rows whose
//     agreement says so.
// The defaults are RunConfig's member initializers (run/run_config.h): a row asks a default-built
// RunConfig, so no default is typed twice. What a run found when it started (model size, hosts,
// buckets, environment) is recorded beside the settings: run/run_facts.h.
//
// Adding a setting: a field (with its default) in RunConfig, one row here; docs/design.md, "Adding a
// setting", walks through it.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run_config.h"

namespace dtbench::run {

// What a setting's value is, on the command line and in config.json.
enum class ValueType {
  kText,     // a word; config.json: a string
  kInteger,  // a whole number (int64)
  kCount,    // a whole number >= 0 (uint64: the seed)
  kNumber,   // a real number
  kSwitch,   // a flag without a value; config.json: true or false
  kTexts,    // config.json only: a list of strings (the command line as typed)
};

// How the ranks of one run, and a resumed run, treat a setting.
enum class Agreement {
  kPerRank,   // ranks may differ: where each finds its data, how fast it loads, its own connection
  kAllRanks,  // every rank the same (the collectives must match); a resumed run may change it
  kResumed,   // every rank the same, and a resumed run keeps it: a change would change the result
};

// A setting's own rule: "FLAG must be <text>, got VALUE" when holds() is false.
struct Rule {
  std::string text;
  std::function<bool(const nlohmann::json&)> holds;
};

struct Setting {
  std::string key;    // config.json's key; for a flag that is not recorded, the name agreement uses
  std::string flag;   // "--lr"; "" for a value that no flag sets (the command line as typed)
  std::string group;  // the section of --help
  std::string help;
  ValueType type = ValueType::kText;
  bool switchValue = true;    // kSwitch: what giving the flag sets (--no-overlap sets overlap false)
  bool recorded = true;       // written into config.json
  bool rankFlag = false;      // a flag every multi-rank subcommand shares (experiments/cli/rank_options.cpp)
  bool defaultShown = true;   // false: the default depends on other settings or the environment
  Agreement agreement = Agreement::kPerRank;
  std::optional<Rule> rule;
  // The value in config.json's terms, and back (enums by name); null for the rank flags that only
  // find the other ranks (--rank, --master-addr, ...), which RunConfig holds as the launcher gave them.
  std::function<nlohmann::json(const RunConfig&)> get;
  // Throws common::UsageError naming the flag (or key) and what it takes.
  std::function<void(RunConfig&, const nlohmann::json&)> set;

  // The default, from a default-built RunConfig; null where none is shown.
  nlohmann::json defaultValue() const;
  // As --help shows it: "0.0005", "sgd", "25.0"; "" where none is shown (and for switches).
  std::string defaultText() const;
};

// A setting's value as messages and --help show it: numbers as C++ streams them (0.0005, 300, nan),
// strings bare, the rest as JSON.
std::string valueText(const nlohmann::json& value);

// Every row, in the order of `dtbench train --help`.
const std::vector<Setting>& settings();

// The row with config.json key `key`, or flag `flag` ("--lr"); nullptr when there is none.
const Setting* findSettingByKey(const std::string& key);
const Setting* findSettingByFlag(const std::string& flag);

// Throws common::UsageError "FLAG must be <rule>, got VALUE" when `config` breaks `setting`'s rule.
void checkRule(const Setting& setting, const RunConfig& config);
// checkRule over every row, in order.
void checkRules(const RunConfig& config);

// Every recorded setting of `config` under its key: the settings' part of config.json.
nlohmann::json settingsJson(const RunConfig& config);

// The settings of a run back from its config.json: every recorded key present sets its field, an
// absent one keeps the default. A value that does not read as its setting, or breaks its rule, adds
// one sentence to `problems` ("config.json: lr: --lr takes a number, got \"fast\"", "config.json:
// world_size: --world-size must be >= 1, got -2") and keeps the default.
RunConfig readSettings(const nlohmann::json& config, std::vector<std::string>& problems);

// The keys of the rows agreement covers (kAllRanks and kResumed), with `config`'s values; and
// the same for the rows a resumed run must keep (kResumed).
nlohmann::json agreedSettingsJson(const RunConfig& config);

// What --resume finds changed: the rows a resumed run must keep (Agreement::kResumed) whose value in
// the run's config.json (`recorded`) differs from `now`'s, each as "--lr (lr in the run's config.json:
// 0.1, now: 0.5)", joined by ", "; "" when none differs. A key the run's config.json lacks (written
// before the setting existed) is not compared.
std::string describeResumeChanges(const nlohmann::json& recorded, const RunConfig& now);

// The same over every row the ranks agree on (Agreement::kAllRanks and kResumed): what makes a run
// another measurement than `now` would be (a sweep finds a completed point made with other flags).
std::string describeRunChanges(const nlohmann::json& recorded, const RunConfig& now);

}  // namespace dtbench::run
