#include "trainer/checkpointer.h"

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/allgather_values.h"
#include "common/usage_error.h"
#include "trainer/checkpoint.h"
#include "trainer/config_json.h"
#include "trainer/run_directory.h"

namespace dtbench::trainer {
namespace {

using common::UsageError;

std::string rankFile(int rank) { return "rank" + std::to_string(rank) + ".pt"; }

// Rank 0: throws UsageError unless `outDir` holds a run that is not completed and was started with
// the same result-affecting flags as `config`.
void checkResumable(const RunConfig& config) {
  const std::string& out = config.outDir;
  if (!std::filesystem::exists(out + "/config.json"))
    throw UsageError("--resume " + out +
                     ": no run there (config.json is missing); give the --out of "
                     "the interrupted run");
  const nlohmann::json recorded = readJsonFile(out + "/config.json");
  const nlohmann::json now = toJson(config);
  std::string mismatches;
  for (const char* field : resumeFields())
    if (recorded.contains(field) && recorded[field] != now[field])
      mismatches += std::string(mismatches.empty() ? "" : ", ") + field + " (run: " + recorded[field].dump() +
                    ", now: " + now[field].dump() + ")";
  if (!mismatches.empty())
    throw UsageError("--resume " + out + ": the flags differ from the run's: " + mismatches +
                     "; resume with the run's own flags");
  if (readJsonFile(out + "/summary.json").at("status") == "completed")
    throw UsageError("--resume " + out + ": that run already completed; start a new run with a new --out");
}

}  // namespace

Checkpointer::Checkpointer(const RunConfig& config, World* world, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, GradScaler* scaler, RunRecorder& recorder)
    : config_(config), world_(world), model_(model), optimizer_(optimizer), scaler_(scaler), recorder_(recorder) {}

void Checkpointer::write(const RunPosition& position) {
  if (recorder_.writes()) recorder_.directory().flush();
  const bool perRank = config_.sync.kind == Sync::kPairavg && world_;
  nlohmann::json mine = {{"rng", captureRngState()}, {"records", recorder_.rankState()}};
  if (scaler_) mine["grad_scaler"] = scaler_->state();  // per rank: under pairavg each rank keeps its own
  std::vector<std::string> states{mine.dump()};
  std::vector<std::string> archives{root() || perRank ? serializeTrainingState(model_, optimizer_) : ""};
  if (world_) {
    states = comm::allgatherBytes(*world_->communicator, states.front());
    if (perRank) archives = comm::allgatherBytes(*world_->communicator, archives.front());
  }
  if (!root()) return;
  nlohmann::json state = recorder_.runState();
  state["epoch"] = position.epoch;
  state["steps_done"] = position.stepsDone;
  state["global_step"] = position.globalStep;
  state["elapsed_s"] = position.elapsedS;
  state["per_rank_models"] = perRank;
  state["ranks"] = nlohmann::json::array();
  for (const std::string& text : states) state["ranks"].push_back(nlohmann::json::parse(text));
  std::map<std::string, std::string> files;
  for (size_t r = 0; r < archives.size(); ++r) files[rankFile(static_cast<int>(r))] = archives[r];
  saveCheckpoint(recorder_.directory().path(), files, state);
}

RunPosition Checkpointer::restore() {
  const int rank = world_ ? world_->rank() : 0;
  const int worldSize = world_ ? world_->size() : 1;
  std::string stateText;
  std::string archive;
  LoadedCheckpoint loaded;
  if (root()) {
    checkResumable(config_);
    loaded = loadCheckpoint(config_.outDir);
    stateText = loaded.state.dump();
    archive = loaded.files.at(rankFile(0));
    recorder_.open(RunDirectory::reopen(config_.outDir, loaded.state["history_bytes"], loaded.state["batches_bytes"]));
  }
  if (world_) stateText = comm::broadcastBytes(*world_->communicator, stateText, 0);
  const nlohmann::json state = nlohmann::json::parse(stateText);
  const bool perRank = state.at("per_rank_models").get<bool>();
  if (world_ && perRank) {
    // Rank r's model and optimizer go to rank r (broadcast one by one: resume happens once).
    for (int r = 1; r < worldSize; ++r) {
      std::string bytes = comm::broadcastBytes(*world_->communicator, root() ? loaded.files.at(rankFile(r)) : "", 0);
      if (r == rank) archive = std::move(bytes);
    }
  } else if (world_) {
    archive = comm::broadcastBytes(*world_->communicator, archive, 0);
  }
  deserializeTrainingState(archive, model_, optimizer_);
  const auto& ranks = state["ranks"];
  if (static_cast<int>(ranks.size()) != worldSize)
    throw UsageError("--resume: the checkpoint holds " + std::to_string(ranks.size()) + " ranks, this run has " +
                     std::to_string(worldSize));
  const nlohmann::json& mine = ranks[static_cast<size_t>(rank)];
  restoreRngState(mine["rng"].get<std::string>());
  if (scaler_ && mine.contains("grad_scaler")) scaler_->restore(mine["grad_scaler"]);
  recorder_.restoreRank(mine["records"]);
  if (root()) recorder_.restoreRun(state);
  RunPosition position;
  position.epoch = state["epoch"].get<int64_t>();
  position.stepsDone = state["steps_done"].get<int64_t>();
  position.globalStep = state["global_step"].get<int64_t>();
  position.elapsedS = state["elapsed_s"].get<double>();
  return position;
}

}  // namespace dtbench::trainer
