#include "trainer/record/run_recorder.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/allgather_values.h"
#include "comm/traffic/traffic_exchange.h"
#include "common/clock.h"
#include "common/named_values.h"
#include "run/json_values.h"
#include "trainer/record/peak_memory.h"

namespace dtbench::trainer {

RunRecorder::RunRecorder(const RunConfig& config, World* world, c10::Device device, const GradScaler* scaler,
                         const GradientReadyProbe* readyProbe)
    : config_(config), world_(world), device_(device), scaler_(scaler), readyProbe_(readyProbe) {
  if (readyProbe_) profile_.emplace(readyProbe_->parameters(), readyProbe_->bufferElements());
}

void RunRecorder::open(run::RunDirectory dir) { dir_.emplace(std::move(dir)); }

void RunRecorder::begin(const nlohmann::json& configJson) {
  if (!dir_) return;
  if (config_.resume) {
    summary_.resumedAt.push_back(common::unixSeconds());
  } else {
    dir_->writeConfig(configJson);
    const int world = world_ ? world_->size() : 1;
    summary_.model = config_.model;
    summary_.dataset = datasetNames().name(config_.data.dataset);
    summary_.worldSize = world;
    summary_.batchSize = config_.data.batchSize;
    summary_.globalBatchSize = config_.data.batchSize * world;
    summary_.sync = world_ ? syncNames().name(config_.sync.kind) : "none";
    summary_.amp = ampNames().name(config_.precision.amp);
    summary_.startedAt = common::unixSeconds();
  }
  writeSummary(run::RunOutcome::kRunning);
}

void RunRecorder::startSampleLedger(int64_t datasetSize, int64_t epochSteps, int64_t resumedAtStep, int64_t segment) {
  if (!config_.sampleLedger) return;
  run::LedgerRow facts;
  facts.segment = segment;  // a new one at every resume at another world size
  facts.worldSize = world_ ? world_->size() : 1;
  facts.rank = world_ ? world_->rank() : 0;
  facts.datasetSize = datasetSize;
  facts.batchSize = config_.data.batchSize;
  facts.epochSteps = epochSteps;
  facts.dropLast = config_.data.dropLast;
  facts.seed = config_.seed;  // the training loader's (trainer.cpp)
  ledgerFacts_ = facts;
  if (dir_) ledger_.emplace(dir_->path(), facts.worldSize, config_.resume, resumedAtStep);
}

void RunRecorder::addSamples(int64_t epoch, int64_t step, int64_t globalStep, std::vector<int64_t> indices) {
  if (!ledgerFacts_) return;
  run::LedgerRow row = *ledgerFacts_;
  row.epoch = epoch;
  row.step = step;
  row.globalStep = globalStep;
  row.indices = std::move(indices);
  ledgerRows_ += run::toCsvRow(row) + '\n';
}

void RunRecorder::addStep(const run::StepRecord& r, int64_t globalStep, const std::vector<double>* readyS) {
  epochRecords_.push_back(r);
  launchLastStep_ = std::max(launchLastStep_, globalStep);
  // No ready times given (a step replayed from a CUDA graph): nothing for the profile.
  if (profile_ && !(readyS && readyS->empty())) profile_->add(r.backwardS, readyS ? *readyS : readyProbe_->readyS());
  if (!dir_) return;
  const int world = world_ ? world_->size() : 1;
  dir_->appendHistory(
      {common::unixSeconds(), run::HistoryRowType::kBatch, r.epoch, globalStep, r.loss, r.accuracy, r.samples * world / r.stepS});
}

run::EpochStats RunRecorder::gatherEpoch(int64_t epoch, int64_t fullSteps) {
  std::string rows;
  for (size_t k = rowsWritten_; k < epochRecords_.size(); ++k) rows += run::toCsvRow(epochRecords_[k]) + '\n';
  rowsWritten_ = epochRecords_.size();
  run::EpochStats stats = run::addUp(epoch, fullSteps, epochRecords_);
  const PeakMemory peak = peakMemory(device_);
  nlohmann::json mine = {{"rows", rows},
                         {"peak_host_bytes", peak.hostBytes},
                         {"peak_gpu_bytes", peak.gpuBytes ? nlohmann::json(*peak.gpuBytes) : nlohmann::json()},
                         {"loss_sum", stats.meanLoss * static_cast<double>(stats.steps)},
                         {"correct", stats.trainAccuracy * static_cast<double>(stats.samples)},
                         {"samples", stats.samples},
                         {"steps", stats.steps},
                         {"trace", encodeTraceEvents(trace_)},
                         {"ledger", ledgerRows_}};
  trace_.clear();
  ledgerRows_.clear();
  std::vector<std::string> all{mine.dump()};
  if (world_) all = comm::allgatherBytes(*world_->communicator, all.front());
  if (!dir_) return stats;
  double lossSum = 0, correct = 0;
  int64_t samples = 0, steps = 0;
  std::vector<int64_t> peakHost, peakGpu;
  for (size_t rank = 0; rank < all.size(); ++rank) {
    const nlohmann::json part = nlohmann::json::parse(all[rank]);
    if (ledger_) ledger_->append(static_cast<int64_t>(rank), part["ledger"].get<std::string>());
    peakHost.push_back(part["peak_host_bytes"].get<int64_t>());
    if (!part["peak_gpu_bytes"].is_null()) peakGpu.push_back(part["peak_gpu_bytes"].get<int64_t>());
    dir_->appendBatchRows(part["rows"].get<std::string>());
    lossSum += run::numberValue(part["loss_sum"]);  // NaN once training diverged (written as null)
    correct += run::numberValue(part["correct"]);
    samples += part["samples"].get<int64_t>();
    steps += part["steps"].get<int64_t>();
    if (config_.timeline)
      for (TraceEvent& e : decodeTraceEvents(part["trace"].get<std::string>())) allTrace_.push_back(std::move(e));
  }
  // A resumed run's peaks are the larger of the earlier processes' and this one's.
  const auto keepPeak = [](std::optional<std::vector<int64_t>>& kept, const std::vector<int64_t>& now) {
    if (now.empty()) return;
    if (!kept || kept->size() != now.size()) kept = std::vector<int64_t>(now.size(), 0);
    for (size_t r = 0; r < now.size(); ++r) (*kept)[r] = std::max((*kept)[r], now[r]);
  };
  keepPeak(summary_.peakHostBytes, peakHost);
  keepPeak(summary_.peakGpuBytes, peakGpu);
  // Every rank's samples count towards throughput; loss and accuracy are over every rank's batches.
  stats.samples = samples;
  stats.meanLoss = steps ? lossSum / static_cast<double>(steps) : 0.0;
  stats.trainAccuracy = samples ? correct / static_cast<double>(samples) : 0.0;
  dir_->flush();
  if (ledger_) ledger_->flush();
  return stats;
}

void RunRecorder::endEpoch(const run::EpochStats& stats) {
  epochRecords_.clear();
  rowsWritten_ = 0;
  if (!dir_) return;
  dir_->appendHistory({common::unixSeconds(), run::HistoryRowType::kEpoch, stats.epoch, stats.steps, stats.meanLoss,
                       stats.testAccuracy, stats.imagesPerSec()});
  dir_->flush();
  summary_.epochs.push_back(stats);
  writeSummary(run::RunOutcome::kRunning);
}

void RunRecorder::writeSummary(run::RunOutcome status, const std::string& error) {
  summary_.status = status;  // on every rank: dtbench train's exit code follows it
  if (!error.empty()) summary_.error = error;
  if (!dir_) return;
  summary_.updatedAt = common::unixSeconds();
  if (scaler_) {
    summary_.lossScale = scaler_->lossScale();
    summary_.skippedSteps = scaler_->skippedSteps();
  }
  dir_->writeSummary(summary_);
}

void RunRecorder::finish(double paramChecksum) {
  if (world_) {
    const comm::MergedTraffic merged = comm::gatherTraffic(*world_->communicator, *world_->recorder);
    const std::vector<double> checksums = comm::allgatherDoubles(*world_->communicator, paramChecksum);
    if (dir_) {
      dir_->writeTraffic(merged.traffic, merged.timeline);
      summary_.trafficFirstStep = launchFirstStep_;
      summary_.trafficLastStep =
          launchLastStep_ >= launchFirstStep_ ? std::optional<int64_t>(launchLastStep_) : std::nullopt;
      summary_.paramChecksums = checksums;
    }
  }
  if (dir_ && config_.timeline) writeChromeTrace(dir_->path() + "/timeline.json", allTrace_);
  if (dir_ && profile_ && profile_->steps() > 0)
    run::writeJsonAtomically(dir_->path() + "/step_profile.json", profile_->toJson(world_ ? world_->rank() : 0));
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
    if (ledger_) {
      ledger_->append(0, ledgerRows_);
      ledgerRows_.clear();
      ledger_->flush();
    }
  } catch (const std::exception&) {}
  try {
    writeSummary(run::RunOutcome::kFailed, error);
  } catch (const std::exception& e) {
    if (dir_)
      std::fprintf(stderr, "dtbench: could not record the failure in %s/summary.json: %s\n", dir_->path().c_str(),
                   e.what());
  }
}

nlohmann::json RunRecorder::rankState() const {
  nlohmann::json records = nlohmann::json::array();
  for (const run::StepRecord& r : epochRecords_) records.push_back(run::toJson(r));
  return records;
}

void RunRecorder::restoreRank(const nlohmann::json& records) {
  for (const auto& r : records) epochRecords_.push_back(run::stepRecordFromJson(r));
  rowsWritten_ = epochRecords_.size();
}

nlohmann::json RunRecorder::runState() {
  dir_->flush();
  nlohmann::json state = {{"history_bytes", dir_->historyBytes()},
                          {"batches_bytes", dir_->batchesBytes()},
                          {"summary", run::summaryJson(summary_)},
                          {"epochs", nlohmann::json::array()}};
  for (const run::EpochStats& e : summary_.epochs) state["epochs"].push_back(run::toJson(e));
  return state;
}

void RunRecorder::restoreRun(const run::RunSummary& summary) {
  summary_ = summary;
  if (!dir_) return;
  std::vector<std::string> problems;  // a summary.json that does not read: the traffic reads as the whole run's
  const run::RunSummary onDisk = run::readSummaryFile(dir_->path(), problems);
  summary_.trafficFirstStep = onDisk.trafficFirstStep;
  summary_.trafficLastStep = onDisk.trafficLastStep;
}

}  // namespace dtbench::trainer
