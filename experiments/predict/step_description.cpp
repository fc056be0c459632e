#include "experiments/predict/step_description.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <filesystem>
#include <string>
#include <vector>

#include "comm/backends/backend.h"
#include "comm/bucket_layout.h"
#include "comm/element_type.h"
#include "comm/topology/registry.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/predict/json_fields.h"
#include "run/compression.h"
#include "run/config_schema.h"
#include "run/settings.h"

namespace dtbench::predict {
namespace {

constexpr int64_t kMostElements = int64_t{1} << 40;  // elements of one parameter

// Seconds as a message shows them: "0.0067", "1e+297".
std::string shortNumber(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", seconds);
  return text;
}

void readSettings(const nlohmann::json& json, const JsonFields& f, MeasuredStep& step) {
  run::RunConfig& settings = step.settings;
  if (!json.is_object()) f.fail("settings must be an object");
  const std::string where = "settings.";
  f.onlyKeys(json,
             {"backend", "topology", "sync", "overlap", "bucket_mb", "bucket_layout", "segment_bytes", "compress",
              "compress_rank"},
             where);
  // A name that is none of its set's: the error names the key here (settings.backend), never a command-line flag.
  const auto named = [&](const char* key, const std::vector<std::string>& names, const auto& set) {
    if (!json.contains(key)) return;
    const std::string value = f.text(json, key, where);
    if (std::find(names.begin(), names.end(), value) == names.end())
      f.fail(where + key + ": '" + value + "' is none of " + common::joinList(names, ", "));
    set(value);
  };
  named("backend", comm::backendNames().names(),
        [&](const std::string& v) { settings.comm.connection.backend = comm::backendNames().parse(v); });
  named("topology", comm::topologyNames(),
        [&](const std::string& v) { settings.comm.topology = comm::Topology::parse(v); });
  named("sync", run::syncNames().names(), [&](const std::string& v) { settings.sync.kind = run::syncNames().parse(v); });
  named("bucket_layout", comm::bucketLayoutNames().names(),
        [&](const std::string& v) { step.bucketLayout = comm::bucketLayoutNames().parse(v); });
  named("compress", run::compressionNames().names(),
        [&](const std::string& v) { settings.sync.compress = run::compressionNames().parse(v); });
  if (json.contains("compress_rank"))
    settings.sync.compressRank = f.whole(json, "compress_rank", where, 1, run::kLargestCompressRank);
  if (json.contains("overlap")) settings.sync.overlap = f.flag(json, "overlap", where);
  if (json.contains("bucket_mb")) {
    settings.sync.bucketMb = f.number(json, "bucket_mb", where, false);
    try {
      run::checkRule(*run::findSettingByFlag("--bucket-mb"), settings);
    } catch (const std::exception& e) {
      f.fail(std::string("settings.bucket_mb: ") + e.what());
    }
  }
}

MeasuredParameter readParameter(const nlohmann::json& json, size_t index, double backwardS, const JsonFields& f) {
  const std::string label = "parameters[" + std::to_string(index) + "]", where = label + ".";
  if (!json.is_object()) f.fail(label + " must be an object");
  f.onlyKeys(json, {"name", "elements", "dtype", "shape", "ready_fraction", "ready_s"}, where);
  MeasuredParameter p;
  p.name = json.contains("name") ? f.text(json, "name", where) : "parameter " + std::to_string(index);
  p.elements = f.whole(json, "elements", where, 1, kMostElements);
  const std::string dtype = json.contains("dtype") ? f.text(json, "dtype", where) : "float32";
  try {
    p.elementBytes = comm::bytesPerElement(comm::parseElementType(dtype));
    p.dtype = dtype;
  } catch (const std::exception&) {
    f.fail(where + "dtype '" + dtype + "' is no element type (float32, float16, bfloat16)");
  }
  if (json.contains("shape")) {
    const nlohmann::json& shape = json.at("shape");
    int64_t product = 1;
    if (shape.is_array())
      for (const nlohmann::json& d : shape) {
        if (!d.is_number_integer() || d.get<int64_t>() < 1) f.fail(where + "shape must list sizes of 1 or more");
        p.shape.push_back(d.get<int64_t>());
        product *= p.shape.back();
      }
    if (!shape.is_array() || product != p.elements)
      f.fail(where + "shape must be a list of sizes whose product is its elements (" + std::to_string(p.elements) + ")");
  }
  const bool fraction = json.contains("ready_fraction"), absolute = json.contains("ready_s");
  if (fraction && absolute)
    f.fail(label + " (" + p.name + ") takes exactly one of ready_fraction (0 to 1 of backward) or ready_s (seconds "
           "from backward's start), and has both");
  if (!fraction && !absolute) f.fail(label + " (" + p.name + ") needs one of ready_fraction (0 to 1 of backward) or ready_s");
  if (fraction) {
    const double r = f.number(json, "ready_fraction", where, true);
    if (r > 1) f.fail(where + "ready_fraction must be from 0 to 1 (of backward)");
    p.readyS = r * backwardS;
  } else {
    p.readyS = f.number(json, "ready_s", where, true);
    // A gradient is made by backward: ready at its end at the latest.
    if (p.readyS > backwardS)
      f.fail(where + "ready_s (" + p.name + ") is " + shortNumber(p.readyS) + " s, past backward's end: at most " +
             "compute_s.backward, " + shortNumber(backwardS) + " s");
  }
  return p;
}

void readSpeedOfLight(const nlohmann::json& json, const JsonFields& f, MeasuredStep& step) {
  step.device = readGpuField(json, f);
  if (json.contains("flops_per_image")) {
    const nlohmann::json& flops = json.at("flops_per_image");
    if (!flops.is_object())
      f.fail("flops_per_image must be an object {forward, training_convolution, training_linear[, elementwise]}");
    f.onlyKeys(flops, {"forward", "training", "training_convolution", "training_linear", "elementwise"},
               "flops_per_image.");
    run::ModelFlops m;
    m.forward = f.number(flops, "forward", "flops_per_image.", false);
    m.trainingConvolution = f.number(flops, "training_convolution", "flops_per_image.", true);
    m.trainingLinear = f.number(flops, "training_linear", "flops_per_image.", true);
    if (flops.contains("elementwise")) m.elementwise = f.number(flops, "elementwise", "flops_per_image.", true);
    if (!(m.training() > 0)) f.fail("flops_per_image: training_convolution + training_linear must be > 0");
    // "training" is written as their sum; given, it must be that sum.
    if (flops.contains("training") &&
        std::abs(f.number(flops, "training", "flops_per_image.", false) - m.training()) > 1e-9 * m.training())
      f.fail("flops_per_image.training must be training_convolution + training_linear (or left out)");
    step.flops = m;
  }
  if (json.contains("precision")) {
    const nlohmann::json& precision = json.at("precision");
    if (!precision.is_object()) f.fail("precision must be an object {convolution, linear} of fp32, tf32, bf16, fp16");
    f.onlyKeys(precision, {"convolution", "linear"}, "precision.");
    for (const auto& [key, slot] : {std::pair{"convolution", &step.convolutionPrecision},
                                    std::pair{"linear", &step.linearPrecision}}) {
      const std::string value = f.text(precision, key, "precision.");
      *slot = run::parsePrecision(value);
      if (!*slot) f.fail(std::string("precision.") + key + " '" + value + "' is none of fp32, tf32, bf16, fp16");
    }
  }
}

// "compute_spread": {"samples_s": [...], "world": N0}: every per-rank compute measured, in seconds, on a
// run of N0 ranks (compute_spread.h).
void readComputeSpread(const nlohmann::json& spread, const JsonFields& f, MeasuredStep& step) {
  if (!spread.is_object()) f.fail("compute_spread must be an object {samples_s, world}");
  f.onlyKeys(spread, {"samples_s", "world"}, "compute_spread.");
  if (!spread.contains("samples_s") || !spread.at("samples_s").is_array() || spread.at("samples_s").size() < 2)
    f.fail("compute_spread.samples_s must be a list of at least 2 per-rank compute times in seconds");
  std::vector<double> samples;
  const nlohmann::json& list = spread.at("samples_s");
  for (size_t i = 0; i < list.size(); ++i)
    samples.push_back(f.number(nlohmann::json{{"sample", list[i]}}, "sample", "compute_spread.samples_s[" +
                                                                                std::to_string(i) + "].", true,
                               kMostPhaseSeconds));
  const int64_t world = spread.contains("world") ? f.whole(spread, "world", "compute_spread.", 1, 65536) : 1;
  step.spread = makeComputeSpread(std::move(samples), static_cast<int>(world));
}

}  // namespace

MeasuredStep stepFromDescription(const nlohmann::json& json, const std::string& source) {
  const JsonFields f(source, "The step description");
  if (!json.is_object()) f.fail("the file must hold one JSON object");
  f.onlyKeys(json,
             {"format", "description", "model", "dataset", "batch_size", "train_samples", "drop_last", "compute_s",
              "settings", "buffer_elements", "parameters", "gpu", "flops_per_image", "precision", "compress_s", "compute_spread"},
             "");
  if (f.text(json, "format", "") != kStepDescriptionFormat)
    f.fail(std::string("format must be \"") + kStepDescriptionFormat + "\"");
  MeasuredStep step;
  step.path = source;
  step.described = true;
  if (json.contains("description")) step.description = f.text(json, "description", "");
  step.settings.model = f.text(json, "model", "");
  step.datasetLabel = json.contains("dataset") ? f.text(json, "dataset", "") : "described";
  step.batchSize = static_cast<int>(f.whole(json, "batch_size", "", 1, kMostBatchSize));
  step.trainSamples = f.whole(json, "train_samples", "", 1, kMostSamples);
  if (json.contains("drop_last")) step.settings.data.dropLast = f.flag(json, "drop_last", "");

  if (!json.contains("compute_s") || !json.at("compute_s").is_object())
    f.fail("compute_s must be an object {h2d, forward, backward, optimizer[, total]} in seconds");
  const nlohmann::json& c = json.at("compute_s");
  f.onlyKeys(c, {"h2d", "forward", "backward", "optimizer", "total"}, "compute_s.");
  const double most = kMostPhaseSeconds;
  step.h2dS = c.contains("h2d") ? f.number(c, "h2d", "compute_s.", true, most) : 0;
  step.forwardS = f.number(c, "forward", "compute_s.", true, most);
  step.backwardS = f.number(c, "backward", "compute_s.", false, most);
  step.optimizerS = c.contains("optimizer") ? f.number(c, "optimizer", "compute_s.", true, most) : 0;
  const double phases = step.h2dS + step.forwardS + step.backwardS + step.optimizerS;
  step.computeS = c.contains("total") ? f.number(c, "total", "compute_s.", false, most) : phases;
  if (step.computeS > most) f.fail("compute_s: the phases total more than " + shortNumber(most) + " s");
  if (step.computeS < step.h2dS + step.forwardS + step.backwardS)
    f.fail("compute_s.total is shorter than h2d + forward + backward");
  step.measuredStepS = step.computeS;
  step.rows = 0;

  step.settings.comm.connection.backend = comm::Backend::kNccl;  // a description's default: a GPU step
  if (json.contains("settings")) readSettings(json.at("settings"), f, step);
  if (json.contains("settings") && json.at("settings").contains("segment_bytes") &&
      !json.at("settings").at("segment_bytes").is_null())
    step.segmentBytes = f.whole(json.at("settings"), "segment_bytes", "settings.", 0, kMostElements);
  if (json.contains("buffer_elements")) {
    step.bufferElements = f.whole(json, "buffer_elements", "", 0, kMostElements);
    step.bufferElementsKnown = true;
  }
  if (!json.contains("parameters") || !json.at("parameters").is_array() || json.at("parameters").empty())
    f.fail("parameters must be a non-empty list, in backward order");
  const nlohmann::json& list = json.at("parameters");
  std::vector<MeasuredParameter> backwardOrder;
  for (size_t i = 0; i < list.size(); ++i) backwardOrder.push_back(readParameter(list[i], i, step.backwardS, f));
  step.parameters.assign(backwardOrder.rbegin(), backwardOrder.rend());  // model order, as a run's
  step.readyMeasured = true;
  readSpeedOfLight(json, f, step);
  if (json.contains("compress_s")) {
    if (!run::compressionRow(step.settings.sync.compress).compresses)
      f.fail("compress_s is the encoding and decoding of settings.compress, which is none here");
    step.compressS = f.number(json, "compress_s", "", true);
  }
  if (json.contains("compute_spread")) readComputeSpread(json.at("compute_spread"), f, step);
  return step;
}

MeasuredStep loadStepDescription(const std::string& path) {
  return stepFromDescription(readInputFile(path, "step description"), path);
}

MeasuredStep loadStep(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return loadMeasuredStep(path);
  if (!std::filesystem::exists(path, error))
    throw common::UsageError("dtbench predict: " + path + " is neither a run directory nor a step description file");
  return loadStepDescription(path);
}

nlohmann::json describeStep(const MeasuredStep& step, const std::string& description) {
  const run::RunConfig& s = step.settings;
  nlohmann::json settings = {{"backend", comm::name(s.comm.connection.backend)},
                             {"topology", s.comm.topology.name()},
                             {"sync", run::syncNames().name(s.sync.kind)},
                             {"overlap", s.sync.overlap},
                             {"bucket_mb", s.sync.bucketMb},
                             {"bucket_layout", comm::bucketLayoutNames().name(step.bucketLayout)}};
  if (run::compressionRow(s.sync.compress).compresses) {
    settings["compress"] = run::compressionNames().name(s.sync.compress);
    settings["compress_rank"] = s.sync.compressRank;
  }
  if (step.segmentBytes) settings["segment_bytes"] = *step.segmentBytes;
  nlohmann::json parameters = nlohmann::json::array();
  for (auto p = step.parameters.rbegin(); p != step.parameters.rend(); ++p)
  {
    nlohmann::json parameter = {
        {"name", p->name}, {"elements", p->elements}, {"dtype", p->dtype}, {"ready_s", std::min(p->readyS, step.backwardS)}};
    if (!p->shape.empty()) parameter["shape"] = p->shape;
    parameters.push_back(std::move(parameter));
  }
  nlohmann::json json = {{"format", kStepDescriptionFormat},
                         {"description", description},
                         {"model", s.model},
                         {"dataset", step.datasetLabel},
                         {"batch_size", step.batchSize},
                         {"train_samples", step.trainSamples},
                         {"drop_last", s.data.dropLast},
                         {"compute_s",
                          {{"h2d", step.h2dS},
                           {"forward", step.forwardS},
                           {"backward", step.backwardS},
                           {"optimizer", step.optimizerS},
                           {"total", step.computeS}}},
                         {"settings", settings},
                         {"parameters", parameters}};
  if (step.bufferElementsKnown) json["buffer_elements"] = step.bufferElements;
  if (step.compressS) json["compress_s"] = *step.compressS;
  if (step.spread.known())
    json["compute_spread"] = {{"samples_s", step.spread.samplesS}, {"world", step.spread.inputWorld}};
  if (!step.device.gpuField().empty()) json["gpu"] = step.device.gpuField();
  if (step.flops)
    json["flops_per_image"] = {{"forward", step.flops->forward},
                               {"training_convolution", step.flops->trainingConvolution},
                               {"training_linear", step.flops->trainingLinear},
                               {"elementwise", step.flops->elementwise}};
  if (step.convolutionPrecision && step.linearPrecision)
    json["precision"] = {{"convolution", run::precisionName(*step.convolutionPrecision)},
                         {"linear", run::precisionName(*step.linearPrecision)}};
  return json;
}

void checkDescriptionReads(const nlohmann::json& description, const std::string& writer) {
  try {
    stepFromDescription(description, "the description " + writer + " would write");
  } catch (const common::UsageError& e) {
    throw common::UsageError(std::string(e.what()) + "; nothing written");
  }
}

}  // namespace dtbench::predict
