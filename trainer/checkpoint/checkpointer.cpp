#include "trainer/checkpoint/checkpointer.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "comm/allgather_values.h"
#include "common/usage_error.h"
#include "run/checkpoint_folder.h"
#include "run/config_schema.h"
#include "run/epoch_stats.h"
#include "run/run_directory.h"
#include "run/run_outcome.h"
#include "run/run_summary.h"
#include "trainer/checkpoint/rng_state.h"
#include "trainer/checkpoint/training_state.h"

namespace dtbench::trainer {
namespace {

using common::UsageError;

std::string rankFile(int rank) { return "rank" + std::to_string(rank) + ".pt"; }
// Rank r's gradient-synchronization state (--compress powersgd's residuals and factors).
std::string syncFile(int rank) { return "sync_rank" + std::to_string(rank) + ".pt"; }

// Rank 0: throws UsageError unless `outDir` holds a run that is not completed and was started with
// the same result-affecting flags as `config`.
void checkResumable(const RunConfig& config) {
  const std::string& out = config.outDir;
  if (!std::filesystem::exists(out + "/config.json"))
    throw UsageError("--resume " + out +
                     ": no run there (config.json is missing); give the --out of "
                     "the interrupted run");
  const std::string changes = run::describeResumeChanges(run::readJsonFile(out + "/config.json"), config);
  if (!changes.empty())
    throw UsageError("--resume " + out + ": the flags differ from the run's: " + changes +
                     "; resume with the run's own flags");
  std::vector<std::string> problems;  // a summary that cannot be read: the checkpoint's own checks follow
  if (run::isComplete(run::readSummaryFile(out, problems).status))
    throw UsageError("--resume " + out + ": that run already completed; start a new run with a new --out");
}

std::string rankPath(const std::string& directory, int rank) { return directory + "/" + rankFile(rank); }

// Rank r's model and optimizer archive in a loaded checkpoint; a named error when the file is missing.
const std::string& rankArchive(const run::LoadedCheckpoint& loaded, int rank) {
  const auto file = loaded.files.find(rankFile(rank));
  if (file == loaded.files.end()) {
    throw std::runtime_error(rankPath(loaded.directory, rank) +
                             " is missing: the checkpoint is incomplete; restore the file, or start a new run "
                             "with a new --out");
  }
  return file->second;
}

// What --resume checks a checkpoint against: this run's flags and world.
struct RunShape {
  int64_t epochs = 0;
  int64_t maxSteps = 0;  // 0: whole epochs
  int worldSize = 1;
  bool perRankModels = false;
  bool gradScaler = false;  // --amp fp16
  std::string outDir;
};

// Reads state.json's fields for checkCheckpointState: a missing or mistyped field, or a value that
// does not fit the run, is an error naming the file and the key.
class StateFields {
 public:
  explicit StateFields(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw std::runtime_error(file_ + ": \"" + key + "\" " + problem +
                             "; the checkpoint is damaged or was edited: restore it, or start a new run with a "
                             "new --out");
  }

  const nlohmann::json& get(const nlohmann::json& object, const std::string& key, const std::string& name) const {
    if (!object.contains(key)) fail(name, "is missing");
    return object.at(key);
  }

  int64_t integer(const nlohmann::json& object, const std::string& key, const std::string& name, int64_t low) const {
    const nlohmann::json& value = get(object, key, name);
    if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX))
      fail(name, "must be an integer, not " + shown(value));
    const auto number = value.get<int64_t>();
    if (number < low) fail(name, "is " + std::to_string(number) + ", less than " + std::to_string(low));
    return number;
  }

  const nlohmann::json& typed(const nlohmann::json& object, const std::string& key, const std::string& name,
                              nlohmann::json::value_t type) const {
    const nlohmann::json& value = get(object, key, name);
    if (value.type() != type && !(type == nlohmann::json::value_t::number_float && value.is_number()))
      fail(name, "must be " + std::string(nlohmann::json(type).type_name()) + ", not " + shown(value));
    return value;
  }

  static std::string shown(const nlohmann::json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text + " (" + value.type_name() + ")";
  }

 private:
  std::string file_;
};

// Every field --resume reads from state.json, checked against the run before anything is restored
// (Checkpointer::write writes them; the counts below are what it records at a checkpoint).
void checkCheckpointState(const nlohmann::json& state, const std::string& file, const RunShape& run) {
  using Type = nlohmann::json::value_t;
  const StateFields fields(file);
  const int64_t epoch = fields.integer(state, "epoch", "epoch", 1);
  if (epoch > run.epochs)
    fields.fail("epoch", "is " + std::to_string(epoch) + ", beyond this run's --epochs " + std::to_string(run.epochs));
  const int64_t stepsDone = fields.integer(state, "steps_done", "steps_done", 0);
  if (run.maxSteps > 0 && stepsDone > run.maxSteps)
    fields.fail("steps_done",
                "is " + std::to_string(stepsDone) + ", beyond this run's --max-steps " + std::to_string(run.maxSteps));
  const int64_t globalStep = fields.integer(state, "global_step", "global_step", 0);
  const double elapsed = fields.typed(state, "elapsed_s", "elapsed_s", Type::number_float).get<double>();
  if (!(elapsed >= 0) || !std::isfinite(elapsed)) fields.fail("elapsed_s", "must be a finite number of seconds >= 0");
  const bool perRank = fields.typed(state, "per_rank_models", "per_rank_models", Type::boolean).get<bool>();
  if (perRank != run.perRankModels)
    fields.fail("per_rank_models", std::string("is ") + (perRank ? "true" : "false") + ", but this run keeps " +
                                       (run.perRankModels ? "one model per rank (--sync pairavg)" : "one model"));
  // Absent from checkpoints written before --compress: no gradient-synchronization state.
  if (state.contains("sync_state")) fields.typed(state, "sync_state", "sync_state", Type::boolean);

  std::vector<std::string> problems;
  run::readSummaryJson(fields.typed(state, "summary", "summary", Type::object), problems);
  if (!problems.empty()) fields.fail("summary", "is not the run's summary (" + problems.front() + ")");

  const nlohmann::json& epochs = fields.typed(state, "epochs", "epochs", Type::array);
  if (static_cast<int64_t>(epochs.size()) != epoch - 1)
    fields.fail("epochs", "holds " + std::to_string(epochs.size()) + " finished epochs, but \"epoch\" " +
                              std::to_string(epoch) + " means " + std::to_string(epoch - 1));
  int64_t finishedSteps = 0;
  for (size_t i = 0; i < epochs.size(); ++i) {
    const std::string name = "epochs[" + std::to_string(i) + "]";
    const run::EpochStats stats = run::readEpochStats(epochs[i], "", problems, /*complete=*/true);
    if (!problems.empty()) fields.fail(name, "is not an epoch's figures (" + problems.front() + ")");
    if (stats.epoch != static_cast<int64_t>(i) + 1 || stats.steps < 0)
      fields.fail(name, "is epoch " + std::to_string(stats.epoch) + " with " + std::to_string(stats.steps) +
                            " steps (want epoch " + std::to_string(i + 1) + ")");
    finishedSteps += stats.steps;
  }
  if (globalStep != finishedSteps + stepsDone)
    fields.fail("global_step", "is " + std::to_string(globalStep) + ", but the finished epochs' " +
                                   std::to_string(finishedSteps) + " steps and steps_done " +
                                   std::to_string(stepsDone) + " add up to " +
                                   std::to_string(finishedSteps + stepsDone));

  const nlohmann::json& ranks = fields.typed(state, "ranks", "ranks", Type::array);
  if (static_cast<int>(ranks.size()) != run.worldSize)
    fields.fail("ranks",
                "holds " + std::to_string(ranks.size()) + " ranks, this run has " + std::to_string(run.worldSize));
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string name = "ranks[" + std::to_string(r) + "]";
    if (!ranks[r].is_object()) fields.fail(name, "must be an object, not " + StateFields::shown(ranks[r]));
    try {
      checkRngState(fields.typed(ranks[r], "rng", name + ".rng", Type::string).get<std::string>());
    } catch (const std::invalid_argument& e) {
      fields.fail(name + ".rng", std::string("is not an RNG state (") + e.what() + ")");
    }
    const nlohmann::json& records = fields.typed(ranks[r], "records", name + ".records", Type::array);
    if (static_cast<int64_t>(records.size()) != stepsDone)
      fields.fail(name + ".records",
                  "holds " + std::to_string(records.size()) + " steps, but steps_done is " + std::to_string(stepsDone));
    for (size_t k = 0; k < records.size(); ++k) {
      try {
        run::stepRecordFromJson(records[k]);
      } catch (const std::exception& e) {
        fields.fail(name + ".records[" + std::to_string(k) + "]",
                    std::string("is not a step record (") + e.what() + ")");
      }
    }
    if (run.gradScaler) {
      const nlohmann::json& saved = fields.typed(ranks[r], "grad_scaler", name + ".grad_scaler", Type::object);
      GradScaler scaler;
      try {
        scaler.restore(saved);
      } catch (const nlohmann::json::exception& e) {
        fields.fail(name + ".grad_scaler", std::string("is not a loss scaler's state (") + e.what() + ")");
      } catch (const std::invalid_argument& e) {
        fields.fail(name + ".grad_scaler", std::string("is not a loss scaler's state (") + e.what() + ")");
      }
    }
  }

  // The logs' sizes must fall exactly after the rows written up to the checkpoint: every step's
  // Batch row and every finished epoch's Epoch row, and every rank's batches.csv row of every step.
  const std::pair<const char*, std::pair<const char*, int64_t>> logs[] = {
      {"history_bytes", {"train_history.log", globalStep + epoch - 1}},
      {"batches_bytes", {"batches.csv", globalStep * run.worldSize}}};
  for (const auto& [key, log] : logs) {
    const int64_t bytes = fields.integer(state, key, key, 0);
    const std::string path = (std::filesystem::path(run.outDir) / log.first).string();
    const std::string problem = run::describeLogPrefixMismatch(path, bytes, log.second);
    if (!problem.empty())
      fields.fail(key, "is " + std::to_string(bytes) + ", which does not fit " + path + ": " + problem);
  }
}

}  // namespace

Checkpointer::Checkpointer(const RunConfig& config, World* world, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, GradScaler* scaler, RunRecorder& recorder)
    : config_(config), world_(world), model_(model), optimizer_(optimizer), scaler_(scaler), recorder_(recorder) {}

bool Checkpointer::keepsSyncState() const { return world_ && config_.sync.compress != run::Compression::kNone; }

void Checkpointer::attachSync(GradientSync& sync) {
  sync_ = &sync;
  sync.loadState(restoredSyncState_,
                 run::checkpointDirectory(config_.outDir) + "/" + syncFile(world_ ? world_->rank() : 0));
  restoredSyncState_.clear();
}

void Checkpointer::write(const RunPosition& position) {
  if (recorder_.writes()) recorder_.directory().flush();
  const bool perRank = config_.sync.kind == Sync::kPairavg && world_;
  // Every rank's own (its residuals differ), gathered to rank 0 as pairavg's models are.
  std::vector<std::string> syncStates;
  if (keepsSyncState()) syncStates = comm::allgatherBytes(*world_->communicator, sync_ ? sync_->saveState() : "");
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
  // Every rank's or none: the ranks compress the same buckets from the same step on.
  const bool syncState = !syncStates.empty() && !syncStates.front().empty();
  state["sync_state"] = syncState;
  if (syncState)
    for (size_t r = 0; r < syncStates.size(); ++r) files[syncFile(static_cast<int>(r))] = syncStates[r];
  run::saveCheckpoint(recorder_.directory().path(), files, state);
}

RunPosition Checkpointer::restore() {
  const int rank = world_ ? world_->rank() : 0;
  const int worldSize = world_ ? world_->size() : 1;
  const bool perRankExpected = config_.sync.kind == Sync::kPairavg && world_;
  std::string stateText;
  std::string archive;
  run::LoadedCheckpoint loaded;
  if (root()) {
    // The lock comes before anything is read: a run still writing the directory owns it.
    std::optional<run::RunDirectoryLock> lock;
    if (std::filesystem::is_directory(config_.outDir)) lock.emplace(config_.outDir);
    checkResumable(config_);
    loaded = run::loadCheckpoint(config_.outDir);
    const RunShape shape{config_.epochs,  config_.maxSteps,   worldSize,
                         perRankExpected, scaler_ != nullptr, config_.outDir};
    checkCheckpointState(loaded.state, loaded.directory + "/state.json", shape);
    archive = rankArchive(loaded, 0);
    if (loaded.state.value("sync_state", false))
      for (int r = 0; r < worldSize; ++r)
        if (!loaded.files.count(syncFile(r)))
          throw std::runtime_error(loaded.directory + "/" + syncFile(r) +
                                   " is missing: the checkpoint is incomplete; restore the file, or start a new run "
                                   "with a new --out");
    if (perRankExpected)
      for (int r = 1; r < worldSize; ++r)
        checkTrainingStateReadable(rankArchive(loaded, r), rankPath(loaded.directory, r));
    // Root's own model first: a checkpoint that does not fit the flags fails before the logs are cut.
    deserializeTrainingState(archive, model_, optimizer_, rankPath(loaded.directory, 0));
    if (!lock) lock.emplace(config_.outDir);
    recorder_.open(run::RunDirectory::reopen(std::move(*lock), loaded.state.at("history_bytes").get<int64_t>(),
                                        loaded.state.at("batches_bytes").get<int64_t>()));
    stateText = loaded.state.dump();
  }
  if (world_) stateText = comm::broadcastBytes(*world_->communicator, stateText, 0);
  const nlohmann::json state = nlohmann::json::parse(stateText);  // checked by rank 0
  const bool perRank = state.at("per_rank_models").get<bool>();
  if (world_ && perRank) {
    // Rank r's model and optimizer go to rank r (broadcast one by one: resume happens once).
    for (int r = 1; r < worldSize; ++r) {
      std::string bytes = comm::broadcastBytes(*world_->communicator, root() ? rankArchive(loaded, r) : "", 0);
      if (r == rank) archive = std::move(bytes);
    }
  } else if (world_) {
    archive = comm::broadcastBytes(*world_->communicator, archive, 0);
  }
  // Each rank's gradient-synchronization state, put back by attachSync once the synchronization exists.
  if (state.value("sync_state", false)) {
    if (!keepsSyncState())
      throw std::runtime_error(run::checkpointDirectory(config_.outDir) +
                               " holds gradient-compression state, but this run has --compress none");
    for (int r = 0; r < worldSize; ++r) {
      std::string bytes = comm::broadcastBytes(*world_->communicator, root() ? loaded.files.at(syncFile(r)) : "", 0);
      if (r == rank) restoredSyncState_ = std::move(bytes);
    }
  }
  if (!root())
    deserializeTrainingState(archive, model_, optimizer_,
                             rankPath(run::checkpointDirectory(config_.outDir), perRank ? rank : 0));
  const nlohmann::json& mine = state.at("ranks").at(static_cast<size_t>(rank));
  restoreRngState(mine.at("rng").get<std::string>());
  if (scaler_) scaler_->restore(mine.at("grad_scaler"));
  recorder_.restoreRank(mine.at("records"));
  if (root()) {
    std::vector<std::string> problems;  // none: rank 0 checked the state before anything was restored
    run::RunSummary summary = run::readSummaryJson(state.at("summary"), problems);
    summary.epochs.clear();
    for (const nlohmann::json& e : state.at("epochs")) summary.epochs.push_back(run::readEpochStats(e, "", problems));
    recorder_.restoreRun(summary);
  }
  RunPosition position;
  position.epoch = state.at("epoch").get<int64_t>();
  position.stepsDone = state.at("steps_done").get<int64_t>();
  position.globalStep = state.at("global_step").get<int64_t>();
  position.elapsedS = state.at("elapsed_s").get<double>();
  return position;
}

}  // namespace dtbench::trainer
