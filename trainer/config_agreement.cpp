#include "trainer/config_agreement.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "comm/allgather_values.h"
#include "common/cluster_file.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "run/config_schema.h"

namespace dtbench::trainer {

const std::vector<SharedSetting>& sharedSettings() {
  // The rows of run/config_schema.h whose agreement is not per rank, in their order; each row says
  // why it is shared (or not) where it is defined.
  static const std::vector<SharedSetting> shared = [] {
    std::vector<SharedSetting> rows;
    for (const run::Setting& s : run::settings())
      if (s.agreement != run::Agreement::kPerRank)
        rows.push_back({s.key.c_str(), s.flag.c_str(), s.agreement == run::Agreement::kResumed});
    return rows;
  }();
  return shared;
}

nlohmann::json sharedSettingsJson(const RunConfig& config) { return run::agreedSettingsJson(config); }

namespace {

// "rank 3", "ranks 0-2, 5".
std::string describeRanks(const std::vector<int>& ranks) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    runs.push_back(std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : ""));
    i = j + 1;
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + common::joinList(runs);
}

// Strings without their quotes (sgd, not "sgd"); numbers and booleans as JSON writes them.
std::string describeValue(const nlohmann::json* value) {
  if (!value) return "absent";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

// The flag's own name when it reads as the key ("--lr" for lr), else the key too ("--no-overlap"
// sets overlap, so its values read "overlap=false").
std::string valuePrefix(const SharedSetting& setting) {
  std::string flagAsKey = std::string(setting.flag).substr(2);
  for (char& c : flagAsKey)
    if (c == '-') c = '_';
  return flagAsKey == setting.key ? "" : std::string(setting.key) + "=";
}

}  // namespace

std::string describeDisagreement(const std::vector<nlohmann::json>& ranks) {
  std::vector<std::string> differences;
  for (const SharedSetting& setting : sharedSettings()) {
    // Distinct values in order of first appearance, each with the ranks that hold it.
    std::vector<std::pair<const nlohmann::json*, std::vector<int>>> groups;
    for (size_t r = 0; r < ranks.size(); ++r) {
      const nlohmann::json* value =
          ranks[r].is_object() && ranks[r].contains(setting.key) ? &ranks[r].at(setting.key) : nullptr;
      size_t g = 0;
      while (g < groups.size() &&
             !(groups[g].first == value || (groups[g].first && value && *groups[g].first == *value)))
        ++g;
      if (g == groups.size()) groups.emplace_back(value, std::vector<int>{});
      groups[g].second.push_back(static_cast<int>(r));
    }
    if (groups.size() < 2) continue;
    std::vector<std::string> values;
    for (const auto& [value, holders] : groups)
      values.push_back(describeRanks(holders) + ": " + (value ? valuePrefix(setting) : "") + describeValue(value));
    differences.push_back(std::string(setting.flag) + " (" + common::joinList(values, "; ") + ")");
  }
  if (differences.empty()) return "";
  return "the ranks disagree on " + common::joinList(differences) + "; every rank must run with the same flags";
}

void checkRanksAgree(comm::Communicator& communicator, const RunConfig& config, std::optional<double> slowestLinkBps) {
  std::vector<nlohmann::json> ranks;
  nlohmann::json mine = sharedSettingsJson(config);
  mine["world_size"] = communicator.size();  // the world's own, as the communicator formed it
  mine["link_rate_bps"] = slowestLinkBps ? nlohmann::json(*slowestLinkBps) : nlohmann::json();
  for (const std::string& text : comm::allgatherBytes(communicator, mine.dump()))
    ranks.push_back(nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false));
  // Every rank holds the same list, so every rank reaches the same verdict and none waits for another.
  if (const std::string message = describeDisagreement(ranks); !message.empty()) throw common::UsageError(message);
  std::vector<std::optional<double>> rates;
  for (const nlohmann::json& rank : ranks) {
    const nlohmann::json rate = rank.is_object() ? rank.value("link_rate_bps", nlohmann::json()) : nlohmann::json();
    rates.push_back(rate.is_number() ? std::optional<double>(rate.get<double>()) : std::nullopt);
  }
  if (const std::string message = common::describeLinkRateDisagreement(rates); !message.empty())
    throw common::UsageError(message);
}

}  // namespace dtbench::trainer
