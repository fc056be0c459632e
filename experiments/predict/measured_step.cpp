#include "experiments/predict/measured_step.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "comm/element_type.h"
#include "common/usage_error.h"
#include "experiments/report/runs/run_data.h"
#include "run/run_outcome.h"
#include "run/compression.h"
#include "run/settings.h"
#include "run/step_profile.h"
#include "run/step_record.h"

namespace dtbench::predict {
namespace {

// Bad run data: exit 1 (docs: 1 is missing or bad data, 2 a usage error).
[[noreturn]] void fail(const std::string& dir, const std::string& what) {
  throw std::runtime_error("dtbench predict: run " + dir + ": " + what);
}

int64_t elementBytesOf(const std::string& dtype, const std::string& dir) {
  try {
    return comm::bytesPerElement(comm::parseElementType(dtype));
  } catch (const std::exception&) {
    fail(dir, "unknown element type '" + dtype + "'");
  }
}

// step_profile.json (docs/run-directory.md, read by run/step_profile.h): the parameters and when their
// gradients became ready.
bool readProfile(const std::string& dir, bool localBuffers, MeasuredStep& run) {
  const std::filesystem::path path = std::filesystem::path(dir) / "step_profile.json";
  std::ifstream in(path);
  if (!in) return false;
  try {
    nlohmann::json json;
    in >> json;
    const run::ProfiledStep profile = run::readStepProfile(json);
    for (size_t i = 0; i < profile.parameters.size(); ++i) {
      MeasuredParameter parameter;
      parameter.name = profile.parameters[i].name;
      parameter.elements = profile.parameters[i].elements;
      parameter.dtype = profile.parameters[i].dtype;
      parameter.shape = profile.parameters[i].shape;
      parameter.elementBytes = elementBytesOf(parameter.dtype, dir);
      // null: the gradient never arrived in the steps measured; taken as ready when backward ends.
      parameter.readyS = profile.readyS[i].value_or(profile.backwardS);
      if (parameter.elements < 0 || !(parameter.readyS >= 0)) fail(dir, "step_profile.json: a parameter has negative elements or ready_s");
      run.parameters.push_back(parameter);
    }
    if (profile.bufferElements) {
      run.bufferElements = *profile.bufferElements;
      run.bufferElementsKnown = true;
    }
    if (localBuffers) run.bufferElements = 0;  // --local-bn-stats: nothing is broadcast
  } catch (const std::invalid_argument& e) {
    fail(dir, std::string("step_profile.json is damaged: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    fail(dir, std::string("step_profile.json is damaged: ") + e.what());
  }
  if (run.parameters.empty()) fail(dir, "step_profile.json lists no parameters");
  return true;
}

// Without step_profile.json: config.json's buckets (several ranks, --sync ssgd) stand for the
// parameters, each ready when backward has produced the bytes of it and of every bucket before it
// (gradients spread evenly over backward by size).
void bucketsAsParameters(const std::string& dir, const run::RunFacts& facts, MeasuredStep& run) {
  if (!facts.world || !facts.world->buckets)
    fail(dir, "has no step_profile.json (recorded by dtbench train since predict exists) and no bucket_elements in "
              "config.json: train it again with this dtbench");
  const std::vector<int64_t>& elements = facts.world->buckets->elements;
  const std::vector<std::string>& dtypes = facts.world->buckets->dtypes;
  if (dtypes.size() != elements.size()) fail(dir, "config.json's bucket_dtypes and bucket_elements differ in length");
  std::vector<MeasuredParameter> launchOrder;
  int64_t total = 0;
  for (size_t b = 0; b < elements.size(); ++b) {
    MeasuredParameter p;
    p.name = "bucket " + std::to_string(b);
    p.elements = elements[b] - (b + 1 == elements.size() ? 1 : 0);  // the stop flag rides in the last
    p.dtype = dtypes[b];
    p.elementBytes = elementBytesOf(p.dtype, dir);
    total += p.elements * p.elementBytes;
    launchOrder.push_back(p);
  }
  int64_t done = 0;
  for (MeasuredParameter& p : launchOrder) {
    done += p.elements * p.elementBytes;
    p.readyS = total > 0 ? run.backwardS * static_cast<double>(done) / static_cast<double>(total) : 0;
  }
  run.parameters.assign(launchOrder.rbegin(), launchOrder.rend());  // model order
}

// config.json's "device" where it has the key (the settings read default to cpu without it): what a
// run written before "devices" were recorded still says of its device.
std::optional<run::DeviceKind> deviceSetting(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / "config.json");
  try {
    nlohmann::json config;
    in >> config;
    if (config.is_object() && config.contains("device") && config.at("device").is_string())
      return run::deviceNames().parse(config.at("device").get<std::string>());
  } catch (const std::exception&) {
    // loadRun has read config.json already; a value it does not name says nothing here.
  }
  return std::nullopt;
}

}  // namespace

int64_t MeasuredStep::gradientElements() const {
  int64_t n = 0;
  for (const MeasuredParameter& p : parameters) n += p.elements;
  return n;
}

MeasuredStep loadMeasuredStep(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw common::UsageError("dtbench predict: run " + dir + " is not a directory");
  const report::RunData data = report::loadRun(dir);
  if (!data.problems.empty()) fail(dir, data.problems.front());
  // As the report: only a complete run's steps are whole and typical.
  if (!run::isComplete(data.summary.status))
    fail(dir, "its status is " + data.status() + (data.summary.error ? " (" + *data.summary.error + ")" : "") +
                  ", not completed: predict from a run that completed");
  MeasuredStep run;
  run.path = dir;
  run.settings = data.settings;
  run.datasetLabel = run::datasetNames().name(data.settings.data.dataset);
  run.worldSize = data.worldSize();
  run.batchSize = data.batchSize();
  run.trainSamples = data.facts.trainSamples;
  if (data.facts.world) run.segmentBytes = data.facts.world->segmentBytes;
  if (run.batchSize < 1 || run.trainSamples < 1) fail(dir, "config.json lacks batch_size or train_samples");

  std::vector<run::StepRecord> rows;
  for (const run::StepRecord& r : data.batches)
    if (r.rank == 0) rows.push_back(r);
  if (rows.empty()) fail(dir, "batches.csv has no row of rank 0");
  run.epoch = static_cast<int>(
      std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.epoch < b.epoch; })->epoch);
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const auto& r) { return r.epoch != run.epoch; }), rows.end());
  if (run.epoch == 1 && rows.size() > 1)
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const auto& r) { return r.step == 1; }), rows.end());
  // A compressed run is predicted as its compressed steps: PowerSGD's first --compress-start steps send
  // uncompressed and time no encoding, and their compute lacks what the encoding on the communication
  // thread takes from it on shared cores; they are left out when the epoch has compressed steps.
  if (run::compressionRow(data.settings.sync.compress).compresses &&
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.compressS > 0; }))
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const auto& r) { return !(r.compressS > 0); }), rows.end());
  // Several ranks: each step waits for the rank that ends backward last, and the others wait for it
  // (they end the step together, so the last to end backward is the one whose wait, comm_exposed_s, is
  // the least). Each step is taken from that rank's row: its compute is the step's critical path, which
  // rank 0's alone leaves short by rank 0's wait for it (docs/predict.md, "What is taken from the run").
  std::map<std::pair<int64_t, int64_t>, run::StepRecord> last;  // (epoch, step): the critical row
  for (const run::StepRecord& r : data.batches) {
    const auto [it, first] = last.try_emplace({static_cast<int64_t>(r.epoch), static_cast<int64_t>(r.step)}, r);
    if (!first && r.commExposedS < it->second.commExposedS) it->second = r;
  }
  double rank0Backward = 0, rank0Wait = 0;
  for (run::StepRecord& r : rows) {
    const run::StepRecord& critical = last.at({static_cast<int64_t>(r.epoch), static_cast<int64_t>(r.step)});
    rank0Backward += r.backwardS;
    rank0Wait += r.commExposedS - critical.commExposedS;
    if (critical.rank != r.rank) {
      r = critical;
      ++run.criticalRowsElsewhere;
    }
  }
  run.rows = static_cast<int64_t>(rows.size());
  // The spread: every rank's own compute in the steps kept (a rank that waited for another has the wait
  // in its comm_exposed_s, so its compute is its own).
  std::set<std::pair<int64_t, int64_t>> keptSteps;
  for (const run::StepRecord& r : rows) keptSteps.insert({r.epoch, r.step});
  std::vector<double> perRankCompute;
  for (const run::StepRecord& r : data.batches)
    if (keptSteps.count({r.epoch, r.step})) perRankCompute.push_back(r.stepS - r.dataS - r.commExposedS);
  run.spread = makeComputeSpread(std::move(perRankCompute), run.worldSize);
  const double n = static_cast<double>(rows.size());
  run.rank0WaitS = rank0Wait / n;
  for (const run::StepRecord& r : rows) {
    run.h2dS += r.h2dS / n;
    run.forwardS += r.forwardS / n;
    run.backwardS += r.backwardS / n;
    run.optimizerS += r.optimizerS / n;
    run.computeS += (r.stepS - r.dataS - r.commExposedS) / n;
    run.computeSamplesS.push_back(r.stepS - r.dataS - r.commExposedS);
    run.measuredStepS += (r.stepS - r.dataS) / n;
    run.measuredExposedS += r.commExposedS / n;
    run.measuredCommTotalS += r.commTotalS / n;
  }
  double codec = 0;
  int64_t compressed = 0;
  for (const run::StepRecord& r : rows)
    if (r.compressS > 0) {
      codec += r.compressS;
      ++compressed;
    }
  if (run::compressionRow(data.settings.sync.compress).compresses && compressed > 0)
    run.compressS = codec / static_cast<double>(compressed);
  // Without timed phases (--phase-timing none, a --cuda-graph step: one replay, no phases) there is no
  // backward to place the gradients' ready times in: nothing to predict from.
  if (!std::isfinite(run.forwardS) || !std::isfinite(run.backwardS))
    fail(dir, "its phases were not timed (batches.csv's forward_s and backward_s are empty: --phase-timing none or "
              "--cuda-graph), and predict places each gradient within backward. Predict from a run with "
              "--phase-timing events (the default), or describe the step with --describe-model MODEL --forward-ms F "
              "--backward-ms B");
  run.device = deviceOfRun(data.facts, deviceSetting(dir));
  if (const std::optional<run::SpeedOfLight>& sol = data.facts.speedOfLight) {
    run.flops = sol->flops;
    run.convolutionPrecision = sol->convolutionPrecision;
    run.linearPrecision = sol->linearPrecision;
    run.gemmProbe = sol->gemmProbe;
  }
  run.readyMeasured = readProfile(dir, data.settings.sync.localBnStats, run);
  // The profile's ready times are rank 0's; the critical rows' backward is as long as the ranks' latest,
  // and its gradients come as much later (stretched alike; 1 on one rank, where the rows are rank 0's).
  if (run.readyMeasured && run.criticalRowsElsewhere > 0 && rank0Backward > 0) {
    const double stretch = run.backwardS / (rank0Backward / n);
    for (MeasuredParameter& p : run.parameters) p.readyS *= stretch;
  }
  if (!run.readyMeasured) bucketsAsParameters(dir, data.facts, run);
  return run;
}

int64_t samplesPerRank(const MeasuredStep& run, int world) {
  return run.settings.data.dropLast ? run.trainSamples / world : (run.trainSamples + world - 1) / world;
}

int64_t stepsPerEpoch(const MeasuredStep& run, int world) {
  const int64_t perRank = samplesPerRank(run, world);
  return run.settings.data.dropLast ? perRank / run.batchSize : (perRank + run.batchSize - 1) / run.batchSize;
}

std::optional<std::string> globalBatchNote(const MeasuredStep& run, int world) {
  const int64_t global = static_cast<int64_t>(world) * run.batchSize;
  if (global <= run.trainSamples) return std::nullopt;
  const int64_t perRank = samplesPerRank(run, world), dealt = perRank * world, steps = stepsPerEpoch(run, world);
  const std::string n = std::to_string(world), batch = std::to_string(run.batchSize), images = std::to_string(perRank);
  const std::string dealing = dealt == run.trainSamples ? "the dataset dealt out whole"
                              : dealt > run.trainSamples
                                  ? "the dataset padded to " + std::to_string(dealt) + ", " +
                                        std::to_string(dealt - run.trainSamples) + " of them repeated"
                                  : "the dataset cut to " + std::to_string(dealt);
  std::string note = "N = " + n + ": the global batch (" + n + " × " + batch + " = " + std::to_string(global) +
                     " images) exceeds the epoch's " + std::to_string(run.trainSamples) + ": " + std::to_string(steps) +
                     " step" + (steps == 1 ? "" : "s") + " an epoch, of " + images + (perRank == 1 ? " image" : " images") +
                     " a rank (" + dealing + ")";
  if (perRank < run.batchSize)
    note += "; predicted with the compute of a full batch of " + batch + ", which overstates this step's; "
            "images_per_s counts the " + images;
  return note;
}

}  // namespace dtbench::predict
