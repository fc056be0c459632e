#include "run/run_segment.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "run/json_values.h"

namespace dtbench::run {
using json = nlohmann::json;

std::optional<double> RunSegment::resizeLatencyS() const {
  if (!previousStepAt || !firstStepAt) return std::nullopt;
  return *firstStepAt - *previousStepAt;
}

json segmentJson(const RunSegment& s, bool afterFirst) {
  json out = {{"first_global_step", s.firstGlobalStep}, {"world_size", s.worldSize},
              {"ranks_per_node", s.ranksPerNode},       {"batch_size", s.batchSize},
              {"global_batch_size", s.globalBatchSize}, {"lr", s.lr}};
  // Only segments after the first have a resize to time.
  if (afterFirst) {
    const auto orNull = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    out["previous_step_at"] = orNull(s.previousStepAt);
    out["first_step_at"] = orNull(s.firstStepAt);
    out["resize_latency_s"] = orNull(s.resizeLatencyS());
  }
  return out;
}

namespace {

int64_t segmentCount(const json& segment, const char* key, int64_t least) {
  if (!segment.contains(key)) throw std::invalid_argument(std::string(key) + " is missing");
  const json& v = segment.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > (int64_t{1} << 40))
    throw std::invalid_argument(std::string(key) + " takes a whole number from " + std::to_string(least) +
                                " to 1099511627776, got " + v.dump());
  return v.get<int64_t>();
}

std::optional<double> timeOrNull(const json& segment, const char* key) {
  if (!segment.contains(key) || segment.at(key).is_null()) return std::nullopt;
  const json& v = segment.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw std::invalid_argument(std::string(key) + " takes Unix seconds (a number >= 0) or null, got " + v.dump());
  return v.get<double>();
}

}  // namespace

RunSegment readSegmentJson(const json& segment) {
  if (!segment.is_object()) wrongValue("an object", segment);
  RunSegment s;
  s.firstGlobalStep = segmentCount(segment, "first_global_step", 1);
  s.worldSize = segmentCount(segment, "world_size", 1);
  s.ranksPerNode = segmentCount(segment, "ranks_per_node", 0);
  s.batchSize = segmentCount(segment, "batch_size", 1);
  s.globalBatchSize = segmentCount(segment, "global_batch_size", 1);
  if (!segment.contains("lr")) throw std::invalid_argument("lr is missing");
  const json& lr = segment.at("lr");
  if (!lr.is_number() || !(lr.get<double>() > 0) || !std::isfinite(lr.get<double>()))
    throw std::invalid_argument("lr takes a finite number > 0, got " + lr.dump());
  s.lr = lr.get<double>();
  s.previousStepAt = timeOrNull(segment, "previous_step_at");
  s.firstStepAt = timeOrNull(segment, "first_step_at");
  // resize_latency_s is written from the two; a value that disagrees with them is damage.
  if (segment.contains("resize_latency_s") && !segment.at("resize_latency_s").is_null()) {
    const json& v = segment.at("resize_latency_s");
    const std::optional<double> latency = s.resizeLatencyS();
    if (!v.is_number() || !latency || std::abs(v.get<double>() - *latency) > 1e-3)
      throw std::invalid_argument("resize_latency_s takes first_step_at - previous_step_at (or null), got " + v.dump());
  }
  return s;
}

std::vector<RunSegment> readSegmentsJson(const json& list) {
  if (!list.is_array()) wrongValue("a list of segments", list);
  if (list.empty()) throw std::invalid_argument("holds no segment");
  std::vector<RunSegment> segments;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string name = "[" + std::to_string(i) + "].";
    RunSegment s;
    try {
      s = readSegmentJson(list[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(name + e.what());
    }
    if (s.globalBatchSize != s.batchSize * s.worldSize)
      throw std::invalid_argument(name + "global_batch_size is " + std::to_string(s.globalBatchSize) + ", not batch_size x world_size " + std::to_string(s.batchSize * s.worldSize));
    if (segments.empty() ? s.firstGlobalStep != 1 : s.firstGlobalStep < segments.back().firstGlobalStep)
      throw std::invalid_argument(name + "first_global_step is " + std::to_string(s.firstGlobalStep) +
                                  (segments.empty() ? ", not 1" : ", before the segment before it"));
    segments.push_back(s);
  }
  return segments;
}

json segmentsJson(const std::vector<RunSegment>& segments) {
  json out = json::array();
  for (size_t i = 0; i < segments.size(); ++i) out.push_back(segmentJson(segments[i], i > 0));
  return out;
}

size_t segmentOfStep(const std::vector<RunSegment>& segments, int64_t globalStep) {
  size_t index = 0;
  for (size_t i = 1; i < segments.size(); ++i)
    if (segments[i].firstGlobalStep <= globalStep) index = i;
  return index;
}

std::string describeSegments(const std::vector<RunSegment>& segments) {
  std::string text;
  for (const RunSegment& s : segments)
    text += (text.empty() ? "" : ", ") + std::string("N=") + std::to_string(s.worldSize) + " x B=" +
            std::to_string(s.batchSize) + " from step " + std::to_string(s.firstGlobalStep);
  return text;
}

}  // namespace dtbench::run
