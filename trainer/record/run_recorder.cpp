#include "trainer/record/run_recorder.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <memory>
#include <utility>

#include "comm/allgather_values.h"
#include "comm/traffic/traffic_exchange.h"
#include "common/clock.h"
#include "common/named_values.h"

namespace dtbench::trainer {

RunRecorder::RunRecorder(const RunConfig& config, World* world, const GradScaler* scaler,
                         const GradientReadyProbe* readyProbe)
    : config_(config), world_(world), scaler_(scaler), readyProbe_(readyProbe) {
  if (readyProbe_) profile_.emplace(readyProbe_->parameters(), readyProbe_->bufferElements());
}

void RunRecorder::open(RunDirectory dir) { dir_.emplace(std::move(dir)); }

void RunRecorder::begin(const nlohmann::json& configJson) {
  if (!dir_) return;
  if (config_.resume) {
    summary_["resumed_at"].push_back(common::unixSeconds());
  } else {
    dir_->writeConfig(configJson);
    const int world = world_ ? world_->size() : 1;
    summary_ = {{"model", config_.model},
                {"dataset", datasetNames().name(config_.data.dataset)},
                {"world_size", world},
                {"batch_size", config_.data.batchSize},
                {"global_batch_size", config_.data.batchSize * world},
                {"sync", world_ ? syncNames().name(config_.sync.kind) : "none"},
                {"amp", ampNames().name(config_.precision.amp)},
                {"loss_scale", nullptr},
                {"skipped_steps", 0},
                {"started_at", common::unixSeconds()}};
  }
  writeSummary("running");
}

void RunRecorder::addStep(const StepRecord& r, int64_t globalStep, const std::vector<double>* readyS) {
  epochRecords_.push_back(r);
  // No ready times given (a step replayed from a CUDA graph): nothing for the profile.
  if (profile_ && !(readyS && readyS->empty())) profile_->add(r.backwardS, readyS ? *readyS : readyProbe_->readyS());
  if (!dir_) return;
  const int world = world_ ? world_->size() : 1;
  dir_->appendHistory(
      {common::unixSeconds(), "Batch", r.epoch, globalStep, r.loss, r.accuracy, r.samples * world / r.stepS});
}

EpochStats RunRecorder::gatherEpoch(int64_t epoch, int64_t fullSteps) {
  std::string rows;
  for (size_t k = rowsWritten_; k < epochRecords_.size(); ++k) rows += toCsvRow(epochRecords_[k]) + '\n';
  rowsWritten_ = epochRecords_.size();
  EpochStats stats = addUp(epoch, fullSteps, epochRecords_);
  nlohmann::json mine = {{"rows", rows},
                         {"loss_sum", stats.meanLoss * static_cast<double>(stats.steps)},
                         {"correct", stats.trainAccuracy * static_cast<double>(stats.samples)},
                         {"samples", stats.samples},
                         {"steps", stats.steps},
                         {"trace", encodeTraceEvents(trace_)}};
  trace_.clear();
  std::vector<std::string> all{mine.dump()};
  if (world_) all = comm::allgatherBytes(*world_->communicator, all.front());
  if (!dir_) return stats;
  double lossSum = 0, correct = 0;
  int64_t samples = 0, steps = 0;
  for (const std::string& text : all) {
    const nlohmann::json part = nlohmann::json::parse(text);
    dir_->appendBatchRows(part["rows"].get<std::string>());
    lossSum += numberOrNaN(part["loss_sum"]);  // NaN once training diverged
    correct += numberOrNaN(part["correct"]);
    samples += part["samples"].get<int64_t>();
    steps += part["steps"].get<int64_t>();
    if (config_.timeline)
      for (TraceEvent& e : decodeTraceEvents(part["trace"].get<std::string>())) allTrace_.push_back(std::move(e));
  }
  // Every rank's samples count towards throughput; loss and accuracy are over every rank's batches.
  stats.samples = samples;
  stats.meanLoss = steps ? lossSum / static_cast<double>(steps) : 0.0;
  stats.trainAccuracy = samples ? correct / static_cast<double>(samples) : 0.0;
  dir_->flush();
  return stats;
}

void RunRecorder::endEpoch(const EpochStats& stats) {
  epochRecords_.clear();
  rowsWritten_ = 0;
  if (!dir_) return;
  dir_->appendHistory({common::unixSeconds(), "Epoch", stats.epoch, stats.steps, stats.meanLoss, stats.testAccuracy,
                       stats.imagesPerSec()});
  dir_->flush();
  epochs_.push_back(stats);
  writeSummary("running");
}

void RunRecorder::writeSummary(const char* status, const std::string& error) {
  if (!dir_) return;
  summary_["status"] = status;
  summary_["updated_at"] = common::unixSeconds();
  if (scaler_) {
    summary_["loss_scale"] = scaler_->lossScale();
    summary_["skipped_steps"] = scaler_->skippedSteps();
  }
  nlohmann::json epochRows = nlohmann::json::array();
  for (const EpochStats& e : epochs_) epochRows.push_back(toJson(e));
  summary_["epochs"] = epochRows;
  if (!error.empty()) summary_["error"] = error;
  dir_->writeSummary(summary_);
}

void RunRecorder::finish(double paramChecksum) {
  if (world_) {
    const comm::MergedTraffic merged = comm::gatherTraffic(*world_->communicator, *world_->recorder);
    const std::vector<double> checksums = comm::allgatherDoubles(*world_->communicator, paramChecksum);
    if (dir_) {
      dir_->writeTraffic(merged);
      summary_["param_checksums"] = checksums;
    }
  }
  if (dir_ && config_.timeline) writeChromeTrace(dir_->path() + "/timeline.json", allTrace_);
  if (dir_ && profile_ && profile_->steps() > 0)
    writeJsonAtomically(dir_->path() + "/step_profile.json", profile_->toJson(world_ ? world_->rank() : 0));
}

void RunRecorder::recordFailure(const std::string& error) {
  // The original error is the one to report; the directory may be what failed. The rows and the
  // status are tried apart: logs that cannot be flushed (a full disk keeps rows buffered) must not
  // keep summary.json at "running".
  try {
    if (dir_) {
      for (size_t k = rowsWritten_; k < epochRecords_.size(); ++k)
        dir_->appendBatch(epochRecords_[k]);  // rank 0's own rows at least
      dir_->flush();
    }
  } catch (const std::exception&) {}
  try {
    writeSummary("failed", error);
  } catch (const std::exception& e) {
    if (dir_)
      std::fprintf(stderr, "dtbench: could not record the failure in %s/summary.json: %s\n", dir_->path().c_str(),
                   e.what());
  }
}

nlohmann::json RunRecorder::rankState() const {
  nlohmann::json records = nlohmann::json::array();
  for (const StepRecord& r : epochRecords_) records.push_back(toJson(r));
  return records;
}

void RunRecorder::restoreRank(const nlohmann::json& records) {
  for (const auto& r : records) epochRecords_.push_back(stepRecordFromJson(r));
  rowsWritten_ = epochRecords_.size();
}

nlohmann::json RunRecorder::runState() {
  dir_->flush();
  nlohmann::json state = {{"history_bytes", dir_->historyBytes()},
                          {"batches_bytes", dir_->batchesBytes()},
                          {"summary", summary_},
                          {"epochs", nlohmann::json::array()}};
  for (const EpochStats& e : epochs_) state["epochs"].push_back(toJson(e));
  return state;
}

void RunRecorder::restoreRun(const nlohmann::json& state) {
  summary_ = state.at("summary");
  for (const auto& e : state.at("epochs")) epochs_.push_back(epochStatsFromJson(e));
}

}  // namespace dtbench::trainer
