#include "trainer/checkpoint/checkpointer.h"

#include <algorithm>
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

#include <torch/utils.h>

#include "comm/allgather_values.h"
#include "common/clock.h"
#include "common/counter_hash.h"
#include "common/csv_file.h"
#include "common/usage_error.h"
#include "data/sampler.h"
#include "run/checkpoint_folder.h"
#include "run/compression.h"
#include "run/config_schema.h"
#include "run/epoch_stats.h"
#include "run/run_directory.h"
#include "run/run_outcome.h"
#include "run/run_summary.h"
#include "run/sample_ledger.h"
#include "run/train_history.h"
#include "trainer/checkpoint/rng_state.h"
#include "trainer/checkpoint/training_state.h"

namespace dtbench::trainer {
namespace {

using common::UsageError;

std::string rankFile(int rank) { return "rank" + std::to_string(rank) + ".pt"; }
// Rank r's gradient-synchronization state (--compress powersgd's residuals and factors).
std::string syncFile(int rank) { return "sync_rank" + std::to_string(rank) + ".pt"; }

void checkWorldChange(const RunConfig& config, const nlohmann::json& state, int64_t from, int64_t to);

// Rank 0: throws UsageError unless `outDir` holds a run that is not completed and was started with
// the same result-affecting flags as `config`, and, at another world size (`worldSize`) than its last
// segment's, one whose state can be dealt to it.
void checkResumable(const RunConfig& config, int worldSize) {
  const std::string& out = config.outDir;
  if (!std::filesystem::exists(out + "/config.json"))
    throw UsageError("--resume " + out +
                     ": no run there (config.json is missing); give the --out of "
                     "the interrupted run");
  const nlohmann::json recorded = run::readJsonFile(out + "/config.json");
  const std::string changes = run::describeResumeChanges(recorded, config);
  if (!changes.empty())
    throw UsageError("--resume " + out + ": the flags differ from the run's: " + changes +
                     "; resume with the run's own flags");
  // The flags alone already rule out some world changes (the checkpoint's own world is checked with it).
  const nlohmann::json& segments = recorded.value("segments", nlohmann::json::array());
  const nlohmann::json& last = segments.is_array() && !segments.empty() ? segments.back() : recorded;
  if (last.is_object() && last.contains("world_size") && last.at("world_size").is_number_integer() &&
      last.at("world_size").get<int64_t>() != worldSize)
    checkWorldChange(config, nlohmann::json::object(), last.at("world_size").get<int64_t>(), worldSize);
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
  int64_t datasetSize = 0;
  RunSegment firstSegment;  // the run's flags' segment: what a checkpoint without "segments" ran
};

// The seeds of every rank's generators after a resume at another world size (docs/design.md): a stream of
// counterHash of its own ("resized").
constexpr uint64_t kStreamResized = 0x0000726573697a65;

// The most ranks on one host of `world` (1 without a world).
int64_t ranksPerNodeOf(const World* world) {
  if (!world) return 1;
  std::map<std::string, int64_t> perHost;
  int64_t most = 0;
  for (const std::string& host : world->hostNames) most = std::max(most, ++perHost[host]);
  return most;
}

// A new rank's step records of the epoch in progress, after a resume at `worldSize` ranks: old ranks r,
// r + worldSize, ... merged step by step (their samples added, loss and accuracy averaged by samples, the
// phase times old rank r's, or the first merged one's), so that the epoch's figures count every sample
// the old world trained. Empty for a rank beyond the old world.
nlohmann::json mergedRecords(const nlohmann::json& ranks, int rank, int worldSize) {
  std::vector<run::StepRecord> merged;
  for (size_t old = static_cast<size_t>(rank); old < ranks.size(); old += static_cast<size_t>(worldSize)) {
    const nlohmann::json& records = ranks[old].at("records");
    for (size_t k = 0; k < records.size(); ++k) {
      const run::StepRecord r = run::stepRecordFromJson(records[k]);
      if (k >= merged.size()) {
        merged.push_back(r);
        continue;
      }
      run::StepRecord& m = merged[k];
      const double a = static_cast<double>(m.samples), b = static_cast<double>(r.samples);
      if (a + b > 0) {
        m.loss = (m.loss * a + r.loss * b) / (a + b);
        m.accuracy = (m.accuracy * a + r.accuracy * b) / (a + b);
      }
      m.samples += r.samples;
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const run::StepRecord& r : merged) out.push_back(run::toJson(r));
  return out;
}

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
std::vector<RunSegment> checkCheckpointState(const nlohmann::json& state, const std::string& file, const RunShape& run) {
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
  if (ranks.empty()) fields.fail("ranks", "holds no rank");
  // The segments (absent from checkpoints of runs that never changed their world: one, the flags'), the
  // last one the checkpoint's world.
  std::vector<RunSegment> segments;
  if (state.contains("segments")) {
    const nlohmann::json& list = fields.typed(state, "segments", "segments", Type::array);
    if (list.empty()) fields.fail("segments", "holds no segment");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string name = "segments[" + std::to_string(i) + "]";
      if (!list[i].is_object()) fields.fail(name, "must be an object, not " + StateFields::shown(list[i]));
      RunSegment seg;
      seg.firstGlobalStep = fields.integer(list[i], "first_global_step", name + ".first_global_step", 1);
      seg.worldSize = fields.integer(list[i], "world_size", name + ".world_size", 1);
      seg.ranksPerNode = fields.integer(list[i], "ranks_per_node", name + ".ranks_per_node", 0);
      seg.batchSize = fields.integer(list[i], "batch_size", name + ".batch_size", 1);
      seg.globalBatchSize = fields.integer(list[i], "global_batch_size", name + ".global_batch_size", 1);
      seg.lr = fields.typed(list[i], "lr", name + ".lr", Type::number_float).get<double>();
      if (!(seg.lr > 0) || !std::isfinite(seg.lr)) fields.fail(name + ".lr", "must be a finite number > 0");
      try {  // the resize latency's times (absent from checkpoints written before they were recorded)
        const RunSegment times = run::readSegmentJson(list[i]);
        seg.previousStepAt = times.previousStepAt;
        seg.firstStepAt = times.firstStepAt;
      } catch (const std::invalid_argument& e) {
        fields.fail(name, e.what());
      }
      if (seg.globalBatchSize != seg.batchSize * seg.worldSize)
        fields.fail(name + ".global_batch_size", "is " + std::to_string(seg.globalBatchSize) + ", not batch_size x world_size " +
                                                     std::to_string(seg.batchSize * seg.worldSize));
      const int64_t after = segments.empty() ? 0 : segments.back().firstGlobalStep;
      if (segments.empty() ? seg.firstGlobalStep != 1 : seg.firstGlobalStep < after)
        fields.fail(name + ".first_global_step", "is " + std::to_string(seg.firstGlobalStep) +
                                                     (segments.empty() ? ", not 1" : ", before the segment before it"));
      if (seg.firstGlobalStep > globalStep + 1)
        fields.fail(name + ".first_global_step", "is " + std::to_string(seg.firstGlobalStep) +
                                                     ", beyond global_step + 1 = " + std::to_string(globalStep + 1));
      segments.push_back(seg);
    }
  } else {
    RunSegment only = run.firstSegment;
    only.worldSize = static_cast<int64_t>(ranks.size());
    only.globalBatchSize = only.batchSize * only.worldSize;
    segments.push_back(only);
  }
  if (static_cast<int64_t>(ranks.size()) != segments.back().worldSize)
    fields.fail("ranks", "holds " + std::to_string(ranks.size()) + " ranks, but the last segment ran " +
                             std::to_string(segments.back().worldSize));
  const int64_t stepsBefore = state.contains("steps_before") ? fields.integer(state, "steps_before", "steps_before", 0) : 0;
  if (stepsBefore > stepsDone)
    fields.fail("steps_before", "is " + std::to_string(stepsBefore) + ", more than steps_done " + std::to_string(stepsDone));
  if (state.contains("epoch_start")) {
    const int64_t start = fields.integer(state, "epoch_start", "epoch_start", 0);
    if (start > run.datasetSize)
      fields.fail("epoch_start", "is " + std::to_string(start) + ", beyond the dataset's " +
                                     std::to_string(run.datasetSize) + " samples");
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string name = "ranks[" + std::to_string(r) + "]";
    if (!ranks[r].is_object()) fields.fail(name, "must be an object, not " + StateFields::shown(ranks[r]));
    try {
      checkRngState(fields.typed(ranks[r], "rng", name + ".rng", Type::string).get<std::string>());
    } catch (const std::invalid_argument& e) {
      fields.fail(name + ".rng", std::string("is not an RNG state (") + e.what() + ")");
    }
    const nlohmann::json& records = fields.typed(ranks[r], "records", name + ".records", Type::array);
    // A rank that joined in a later segment lacks the epoch's steps before it.
    if (segments.size() == 1 ? static_cast<int64_t>(records.size()) != stepsDone
                             : static_cast<int64_t>(records.size()) > stepsDone)
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
  // Every rank's batches.csv row of every step: each segment's steps at its world.
  int64_t batchRows = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const int64_t end = i + 1 < segments.size() ? segments[i + 1].firstGlobalStep : globalStep + 1;
    batchRows += (end - segments[i].firstGlobalStep) * segments[i].worldSize;
  }
  const std::pair<const char*, std::pair<const char*, int64_t>> logs[] = {
      {"history_bytes", {"train_history.log", globalStep + epoch - 1}},
      {"batches_bytes", {"batches.csv", batchRows}}};
  for (const auto& [key, log] : logs) {
    const int64_t bytes = fields.integer(state, key, key, 0);
    const std::string path = (std::filesystem::path(run.outDir) / log.first).string();
    const std::string problem = run::describeLogPrefixMismatch(path, bytes, log.second);
    if (!problem.empty())
      fields.fail(key, "is " + std::to_string(bytes) + ", which does not fit " + path + ": " + problem);
  }
  return segments;
}

// Rank 0, before anything is changed: the reasons a checkpoint of `from` ranks cannot continue at `to`.
void checkWorldChange(const RunConfig& config, const nlohmann::json& state, int64_t from, int64_t to) {
  const std::string head = "--resume with world_size " + std::to_string(to) + " (the checkpoint's is " +
                           std::to_string(from) + "): ";
  if (config.sync.kind != Sync::kSsgd)
    throw UsageError(head + "the run trains with --sync pairavg, whose ranks each keep their own model and "
                            "optimizer state (checkpoint/rank<R>.pt), which cannot be dealt to another number of "
                            "ranks; resume with " + std::to_string(from) + " ranks");
  if (run::compressionRow(config.sync.compress).compresses || state.value("sync_state", false))
    throw UsageError(head + "the run compresses its gradients (--compress), whose residuals and factors are each "
                            "rank's own (checkpoint/sync_rank<R>.pt) and cannot be dealt to another number of ranks; "
                            "resume with " + std::to_string(from) + " ranks");
}

// Rank 0: every rank of every world the run had keeps its sample ledger, or the audit would find the
// samples of a rank's steps missing; refused before the logs are cut.
void checkLedgersPresent(const std::string& outDir, const std::vector<RunSegment>& segments) {
  int64_t ranks = 0;
  for (const RunSegment& s : segments) ranks = std::max(ranks, s.worldSize);
  for (int64_t r = 0; r < ranks; ++r) {
    const std::string path = outDir + "/" + run::sampleLedgerFileName(r);
    if (!std::filesystem::exists(path))
      throw std::runtime_error(path + " is missing: the run writes its sample ledger (--sample-ledger) and rank " +
                               std::to_string(r) + " trained in it; restore the file, or start a new run with a new "
                               "--out");
  }
}

// Resize latency (run/run_segment.h): when rank 0 recorded the run's step `globalStep`, the Timestamp of
// its "Batch" row in train_history.log (the last such row: the log was cut back to the checkpoint);
// nullopt before the first step, or where the log does not read (a latency unknown, never a refused resume:
// the checkpoint's check has held the log's size to its rows).
std::optional<double> stepRecordedAt(const std::string& outDir, int64_t globalStep) {
  if (globalStep < 1) return std::nullopt;
  try {
    const std::vector<run::HistoryRow> rows = run::readTrainHistory(common::CsvFile::read(outDir + "/train_history.log"));
    for (auto row = rows.rbegin(); row != rows.rend(); ++row)
      if (row->type == run::HistoryRowType::kBatch && row->step == globalStep) return row->timestamp;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

RunSegment nextSegment(const RunSegment& last, int64_t worldSize, int64_t ranksPerNode, int64_t firstGlobalStep,
                       bool allowGlobalBatchChange) {
  RunSegment next = last;
  next.firstGlobalStep = firstGlobalStep;
  next.previousStepAt.reset();  // its own resize's, set by restore() and the first step
  next.firstStepAt.reset();
  next.worldSize = worldSize;
  next.ranksPerNode = ranksPerNode;
  const int64_t global = last.globalBatchSize;
  if (global % worldSize == 0) {
    next.batchSize = global / worldSize;
    return next;
  }
  if (allowGlobalBatchChange) {
    // Linear scaling: the learning rate follows the global batch.
    next.globalBatchSize = last.batchSize * worldSize;
    next.lr = last.lr * static_cast<double>(next.globalBatchSize) / static_cast<double>(global);
    return next;
  }
  int64_t below = 0, above = 0;
  for (int64_t d = std::min(worldSize - 1, global); d >= 1 && !below; --d)
    if (global % d == 0) below = d;
  for (int64_t d = worldSize + 1; d <= global && !above; ++d)
    if (global % d == 0) above = d;
  std::string sizes = below ? std::to_string(below) : "";
  if (above) sizes += (below ? " or " : "") + std::to_string(above);
  throw UsageError("--resume with world_size " + std::to_string(worldSize) + ": the run's global batch " +
                   std::to_string(global) + " (" + std::to_string(last.batchSize) + " per rank x " +
                   std::to_string(last.worldSize) + " ranks) does not divide among " + std::to_string(worldSize) +
                   " ranks; resume with " + sizes + " ranks (world sizes that divide " + std::to_string(global) +
                   "), or add --allow-global-batch-change to keep " + std::to_string(last.batchSize) +
                   " per rank (global batch " + std::to_string(last.batchSize * worldSize) +
                   ", learning rate scaled by " + std::to_string(last.batchSize * worldSize) + "/" +
                   std::to_string(global) + ")");
}

int64_t epochStepsFrom(int64_t datasetSize, int64_t start, int64_t stepsBefore, int64_t worldSize, int64_t batchSize,
                       bool dropLast, int64_t maxSteps) {
  const int64_t rest = std::max<int64_t>(0, datasetSize - start);
  const int64_t share = dropLast ? rest / worldSize : (rest + worldSize - 1) / worldSize;
  int64_t batches = dropLast ? share / batchSize : (share + batchSize - 1) / batchSize;
  if (maxSteps > 0) batches = std::min(batches, std::max<int64_t>(0, maxSteps - stepsBefore));
  return stepsBefore + batches;
}

Checkpointer::Checkpointer(const RunConfig& config, World* world, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, GradScaler* scaler, RunRecorder& recorder)
    : config_(config), world_(world), model_(model), optimizer_(optimizer), scaler_(scaler), recorder_(recorder) {
  RunSegment first;
  first.worldSize = world ? world->size() : 1;
  first.ranksPerNode = ranksPerNodeOf(world);
  first.batchSize = config.data.batchSize;
  first.globalBatchSize = first.batchSize * first.worldSize;
  first.lr = resolveDefaults(config).optimizer.lr;  // the optimizer's default where --lr is not given
  segments_.push_back(first);
}

bool Checkpointer::keepsSyncState() const { return world_ && run::compressionRow(config_.sync.compress).compresses; }

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
  recordSegments();
  nlohmann::json state = recorder_.runState();
  state["epoch"] = position.epoch;
  state["steps_done"] = position.stepsDone;
  state["global_step"] = position.globalStep;
  state["elapsed_s"] = position.elapsedS;
  state["epoch_start"] = position.epochStart;
  state["steps_before"] = position.stepsBefore;
  state["segments"] = run::segmentsJson(segments_);
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

RunPosition Checkpointer::restore(int64_t datasetSize) {
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
    checkResumable(config_, worldSize);
    loaded = run::loadCheckpoint(config_.outDir);
    RunShape shape{config_.epochs,  config_.maxSteps,   worldSize,
                   perRankExpected, scaler_ != nullptr, config_.outDir, datasetSize, segments_.front()};
    shape.firstSegment.ranksPerNode = 0;  // not recorded by a checkpoint without segments
    std::vector<RunSegment> segments = checkCheckpointState(loaded.state, loaded.directory + "/state.json", shape);
    if (config_.sampleLedger) checkLedgersPresent(config_.outDir, segments);
    nlohmann::json& state = loaded.state;
    const auto from = static_cast<int64_t>(state.at("ranks").size());
    if (from != worldSize) {
      // Another world: refused where state is per rank or the batch does not divide, before anything changes.
      checkWorldChange(config_, state, from, worldSize);
      const RunSegment last = segments.back();
      const int64_t globalStep = state.at("global_step").get<int64_t>();
      segments.push_back(
          nextSegment(last, worldSize, ranksPerNodeOf(world_), globalStep + 1, config_.allowGlobalBatchChange));
      // The epoch in progress: its consumed prefix, which the new ranks continue (data/sampler.h).
      const int64_t stepsDone = state.at("steps_done").get<int64_t>();
      int64_t start = state.value("epoch_start", int64_t{0});
      int64_t before = state.value("steps_before", int64_t{0});
      const int64_t oldSteps = epochStepsFrom(datasetSize, start, before, last.worldSize, last.batchSize,
                                              config_.data.dropLast, config_.maxSteps);
      if (stepsDone == 0) {
        start = 0;
        before = 0;
      } else if (stepsDone >= oldSteps) {
        start = datasetSize;  // the epoch is finished: nothing left to deal
        before = stepsDone;
      } else {
        start = data::consumedPositions(start, stepsDone - before, last.batchSize, last.worldSize);
        before = stepsDone;
      }
      state["epoch_start"] = start;
      state["steps_before"] = before;
    }
    state["segments"] = run::segmentsJson(segments);
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
    if (from != worldSize) {
      // The resize's start: the previous segment's last step the run keeps, as the cut log recorded it.
      segments.back().previousStepAt = stepRecordedAt(config_.outDir, state.at("global_step").get<int64_t>());
      state["segments"] = run::segmentsJson(segments);
    }
    // config.json records the run's segments once it has more than one (and keeps them equal to the
    // checkpoint's: a resumed run that failed before its first checkpoint wrote one too many).
    nlohmann::json configJson = run::readJsonFile(config_.outDir + "/config.json");
    if (segments.size() > 1 || configJson.contains("segments")) {
      configJson["segments"] = state["segments"];
      recorder_.directory().writeConfig(configJson);
    }
    stateText = loaded.state.dump();
  }
  if (world_) stateText = comm::broadcastBytes(*world_->communicator, stateText, 0);
  const nlohmann::json state = nlohmann::json::parse(stateText);  // checked by rank 0
  segments_ = run::readSegmentsJson(state.at("segments"));  // checked by rank 0
  const nlohmann::json& ranks = state.at("ranks");
  const bool resized = static_cast<int64_t>(ranks.size()) != worldSize;
  newSegment_ = resized;
  latencyRecorded_ = false;
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
  if (!resized) {
    const nlohmann::json& mine = ranks.at(static_cast<size_t>(rank));
    restoreRngState(mine.at("rng").get<std::string>());
    if (scaler_) scaler_->restore(mine.at("grad_scaler"));
    recorder_.restoreRank(mine.at("records"));
  } else {
    // Another world: no old rank's generators are this rank's (docs/design.md, "Resuming at another world size").
    torch::manual_seed(common::counterHash(config_.seed, state.at("global_step").get<uint64_t>(),
                                           static_cast<uint64_t>(rank), kStreamResized));
    if (scaler_) scaler_->restore(ranks.at(0).at("grad_scaler"));  // ssgd: every rank skipped the same steps
    recorder_.restoreRank(mergedRecords(ranks, rank, worldSize));
  }
  // The segment's learning rate, once a resume changed the world (another than the flags' after a
  // global-batch change).
  if (segments_.size() > 1)
    for (torch::optim::OptimizerParamGroup& group : optimizer_.param_groups()) group.options().set_lr(segment().lr);
  if (root()) {
    std::vector<std::string> problems;  // none: rank 0 checked the state before anything was restored
    run::RunSummary summary = run::readSummaryJson(state.at("summary"), problems);
    summary.epochs.clear();
    for (const nlohmann::json& e : state.at("epochs")) summary.epochs.push_back(run::readEpochStats(e, "", problems));
    summary.segments = segments_.size() > 1 ? segments_ : std::vector<RunSegment>{};
    recorder_.restoreRun(summary);
  }
  RunPosition position;
  position.epoch = state.at("epoch").get<int64_t>();
  position.stepsDone = state.at("steps_done").get<int64_t>();
  position.globalStep = state.at("global_step").get<int64_t>();
  position.elapsedS = state.at("elapsed_s").get<double>();
  position.epochStart = state.value("epoch_start", int64_t{0});
  position.stepsBefore = state.value("steps_before", int64_t{0});
  return position;
}

void Checkpointer::stepStarting() {
  if (newSegment_ && !segments_.back().firstStepAt) segments_.back().firstStepAt = common::unixSeconds();
}

void Checkpointer::recordSegments() {
  if (!root() || !recorder_.writes() || segments_.size() < 2) return;
  recorder_.summary().segments = segments_;
  if (!newSegment_ || latencyRecorded_ || !segments_.back().firstStepAt) return;
  nlohmann::json configJson = run::readJsonFile(config_.outDir + "/config.json");
  configJson["segments"] = run::segmentsJson(segments_);
  recorder_.directory().writeConfig(configJson);
  latencyRecorded_ = true;
}

}  // namespace dtbench::trainer
