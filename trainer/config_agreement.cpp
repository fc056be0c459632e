#include "trainer/config_agreement.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "comm/allgather_values.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "trainer/config_json.h"

namespace dtbench::trainer {

const std::vector<SharedSetting>& sharedSettings() {
  // unchangedOnResume: true where a changed value would make the resumed run differ from the
  // uninterrupted one (docs/design.md, "Signals, failures and resume"); false where a resumed run
  // may change it and still train the same model, only faster, slower or checked differently.
  //
  // Not listed, because ranks may legitimately differ and the result does not depend on them:
  // where each rank finds its data (data_dir, download, download_url, download_md5; dataset and
  // sizes are listed), how fast it loads and computes (workers, data_on_device, threads, device:
  // the batches are the same bit for bit, "Randomness contract"), its own connection (gloo_iface,
  // gloo_threads, timeout_s), the injected impairment (it holds this rank's own sends: a per-rank
  // value emulates an uneven network and changes timing, not the result), and what only rank 0
  // reads (out, test_batch_size, synthetic_test_size, evaluate: rank 0 alone evaluates and writes).
  // `mode` is not listed: dp under several ranks is refused on each rank by validate().
  static const std::vector<SharedSetting> settings{
      // What is trained, on what and how: each changes the parameters.
      {"model", "--model", true},
      {"dataset", "--dataset", true},
      {"synthetic_train_size", "--synthetic-train-size", true},
      {"batch_size", "--batch-size", true},
      {"drop_last", "--drop-last", true},
      {"seed", "--seed", true},
      {"optimizer", "--optimizer", true},
      {"lr", "--lr", true},
      {"momentum", "--momentum", true},
      {"weight_decay", "--weight-decay", true},
      {"epochs", "--epochs", true},
      {"max_steps", "--max-steps", true},
      {"amp", "--amp", true},
      {"channels_last", "--channels-last", true},
      // A world always agrees on its own size; a resumed run must have the checkpoint's ranks.
      {"world_size", "--world-size", true},
      {"sync", "--sync", true},
      // BatchNorm statistics broadcast from rank 0 each step or kept per rank: a collective, and
      // the model a resumed run continues.
      {"local_bn_stats", "--local-bn-stats", true},
      // How the same sums travel: the collectives (their kind, sizes and order) must match across
      // ranks, but a resumed run may measure another algorithm; sums differ only in rounding.
      {"backend", "--backend", false},
      {"topology", "--topology", false},
      {"ranks_per_host", "--ranks-per-host", false},
      {"overlap", "--no-overlap", false},
      {"bucket_mb", "--bucket-mb", false},
      // Collectives at agreed steps (a checksum comparison, a checkpoint's gathers): same period on
      // every rank, but checking or checkpointing more or less often does not change the model.
      {"check_every", "--check-every", false},
      {"checkpoint_every", "--checkpoint-every", false},
      // Every rank's trace events reach rank 0; a rank without --timeline would send none.
      {"timeline", "--timeline", false},
      // A resuming rank receives rank 0's checkpoint through collectives the others would not join.
      // Not a field of config.json (a resumed run keeps the config.json it started with).
      {"resume", "--resume", false},
  };
  return settings;
}

nlohmann::json sharedSettingsJson(const RunConfig& config) {
  nlohmann::json all = toJson(config);
  all["resume"] = config.resume;
  nlohmann::json shared = nlohmann::json::object();
  for (const SharedSetting& setting : sharedSettings()) shared[setting.key] = all.at(setting.key);
  return shared;
}

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

void checkRanksAgree(comm::Communicator& communicator, const RunConfig& config) {
  std::vector<nlohmann::json> ranks;
  for (const std::string& text : comm::allgatherBytes(communicator, sharedSettingsJson(config).dump()))
    ranks.push_back(nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false));
  // Every rank holds the same list, so every rank reaches the same verdict and none waits for another.
  if (const std::string message = describeDisagreement(ranks); !message.empty()) throw common::UsageError(message);
}

}  // namespace dtbench::trainer
