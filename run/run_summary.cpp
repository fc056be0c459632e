#include "run/run_summary.h"

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "run/json_values.h"

namespace dtbench::run {
namespace {

using json = nlohmann::json;

template <typename T>
json valueOrNull(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

const EpochStats* RunSummary::findEpoch(int64_t epoch) const {
  for (const EpochStats& e : epochs)
    if (e.epoch == epoch) return &e;
  return nullptr;
}

json summaryJson(const RunSummary& s) {
  json out = {{"model", s.model},
              {"dataset", s.dataset},
              {"world_size", s.worldSize},
              {"batch_size", s.batchSize},
              {"global_batch_size", s.globalBatchSize},
              {"sync", s.sync},
              {"amp", s.amp},
              {"loss_scale", valueOrNull(s.lossScale)},
              {"skipped_steps", s.skippedSteps}};
  if (s.startedAt) out["started_at"] = *s.startedAt;
  if (!s.resumedAt.empty()) out["resumed_at"] = s.resumedAt;
  if (s.segments.size() > 1) out["segments"] = segmentsJson(s.segments);
  if (s.updatedAt) out["updated_at"] = *s.updatedAt;
  if (s.finishedAt) out["finished_at"] = *s.finishedAt;
  if (s.status) out["status"] = factsOf(*s.status).name;
  if (s.error) out["error"] = *s.error;
  if (s.interruptedAtStep) out["interrupted_at_step"] = *s.interruptedAtStep;
  json epochs = json::array();
  for (const EpochStats& e : s.epochs) epochs.push_back(toJson(e));
  out["epochs"] = std::move(epochs);
  if (s.paramChecksum) out["param_checksum"] = *s.paramChecksum;
  if (s.paramChecksums) out["param_checksums"] = *s.paramChecksums;
  if (s.trafficFirstStep) out["traffic_first_step"] = *s.trafficFirstStep;
  if (s.trafficLastStep) out["traffic_last_step"] = *s.trafficLastStep;
  if (s.peakHostBytes) out["peak_host_bytes"] = *s.peakHostBytes;
  if (s.peakGpuBytes) out["peak_gpu_bytes"] = *s.peakGpuBytes;
  return out;
}

RunSummary readSummaryJson(const json& summary, std::vector<std::string>& problems) {
  RunSummary s;
  if (!summary.is_object()) {
    if (!summary.is_null()) problems.push_back("summary.json holds " + std::string(summary.type_name()) + ", not an object");
    return s;
  }
  const JsonFields fields(summary, "summary.json: ", problems);
  using Reader = std::function<void(const json&)>;
  const auto number = [](std::optional<double>& into) -> Reader {
    return [&into](const json& v) {
      if (!v.is_number()) wrongValue("a number", v);
      into = v.get<double>();
    };
  };
  fields.read("model", [&](const json& v) { s.model = textValue(v); });
  fields.read("dataset", [&](const json& v) { s.dataset = textValue(v); });
  fields.read("world_size", [&](const json& v) { s.worldSize = wholeValue(v); });
  fields.read("batch_size", [&](const json& v) { s.batchSize = wholeValue(v); });
  fields.read("global_batch_size", [&](const json& v) { s.globalBatchSize = wholeValue(v); });
  fields.read("sync", [&](const json& v) { s.sync = textValue(v); });
  fields.read("amp", [&](const json& v) { s.amp = textValue(v); });
  fields.read("loss_scale", [&](const json& v) {
    if (!v.is_null()) number(s.lossScale)(v);
  });
  fields.read("skipped_steps", [&](const json& v) { s.skippedSteps = wholeValue(v); });
  fields.read("started_at", number(s.startedAt));
  fields.read("resumed_at", [&](const json& v) { s.resumedAt = listValue<double>(v, numberValue); });
  fields.read("segments", [&](const json& v) { s.segments = readSegmentsJson(v); });
  fields.read("updated_at", number(s.updatedAt));
  fields.read("finished_at", number(s.finishedAt));
  fields.read("status", [&](const json& v) {
    s.status = findRunOutcome(textValue(v));
    if (!s.status) wrongValue(("one of " + runOutcomeNames()).c_str(), v);
  });
  fields.read("error", [&](const json& v) { s.error = textValue(v); });
  fields.read("interrupted_at_step", [&](const json& v) { s.interruptedAtStep = wholeValue(v); });
  fields.read("epochs", [&](const json& v) {
    if (!v.is_array()) wrongValue("a list", v);
    for (size_t i = 0; i < v.size(); ++i)
      s.epochs.push_back(readEpochStats(v[i], "summary.json: epochs[" + std::to_string(i) + "].", problems));
  });
  // A diverged run's checksum is NaN, written as null.
  fields.read("param_checksum", [&](const json& v) { s.paramChecksum = numberValue(v); });
  fields.read("param_checksums", [&](const json& v) { s.paramChecksums = listValue<double>(v, numberValue); });
  fields.read("traffic_first_step", [&](const json& v) {
    const int64_t step = wholeValue(v);
    if (step < 1) wrongValue("a global step >= 1", v);
    s.trafficFirstStep = step;
  });
  fields.read("traffic_last_step", [&](const json& v) {
    const int64_t step = wholeValue(v);
    if (step < 1) wrongValue("a global step >= 1", v);
    s.trafficLastStep = step;
  });
  const auto bytes = [](const json& v) {
    const int64_t value = wholeValue(v);
    if (value < 0) wrongValue("a number of bytes >= 0", v);
    return value;
  };
  fields.read("peak_host_bytes", [&](const json& v) { s.peakHostBytes = listValue<int64_t>(v, bytes); });
  fields.read("peak_gpu_bytes", [&](const json& v) { s.peakGpuBytes = listValue<int64_t>(v, bytes); });
  return s;
}

RunSummary readSummaryFile(const std::string& runDirectory, std::vector<std::string>& problems) {
  const nlohmann::json summary =
      readJsonOrProblem((std::filesystem::path(runDirectory) / "summary.json").string(), problems);
  return readSummaryJson(summary, problems);
}

std::optional<RunOutcome> readRunOutcome(const std::string& runDirectory) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(runDirectory, error))
    throw std::invalid_argument(runDirectory + " is not a directory");
  const bool hasSummary = fs::exists(fs::path(runDirectory) / "summary.json", error);
  if (!hasSummary && !fs::exists(fs::path(runDirectory) / "config.json", error))
    throw std::invalid_argument(runDirectory + " is not a run directory (it has neither config.json nor summary.json)");
  if (!hasSummary) return std::nullopt;
  std::vector<std::string> problems;
  const RunSummary summary = readSummaryFile(runDirectory, problems);
  // A problem elsewhere in the file (an epoch's figure) leaves the outcome it records standing.
  if (summary.status || problems.empty()) return summary.status;
  std::string text;
  for (const std::string& problem : problems) text += (text.empty() ? "" : "; ") + problem;
  throw std::runtime_error(runDirectory + ": " + text);
}

}  // namespace dtbench::run
