#include "trainer/step/chrome_trace.h"

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/atomic_file.h"
#include "common/clock.h"

namespace dtbench::trainer {

namespace {

// The wire form of one event: [name, category, rank, lane, startUs, durationUs, args].
constexpr size_t kFields = 7;

std::invalid_argument badText(size_t index, const std::string& what) {
  return std::invalid_argument("malformed trace events (event " + std::to_string(index) + "): " + what +
                               "; the text must come from encodeTraceEvents");
}

TraceEvent decodeEvent(size_t index, const nlohmann::json& item) {
  if (!item.is_array() || item.size() != kFields) {
    throw badText(index, "expected an array of " + std::to_string(kFields) + " fields");
  }
  if (!item[0].is_string() || !item[1].is_string()) throw badText(index, "name and category must be strings");
  if (!item[2].is_number_integer() || !item[3].is_number_integer()) {
    throw badText(index, "rank and lane must be integers");
  }
  if (!item[4].is_number() || !item[5].is_number()) throw badText(index, "start and duration must be numbers");
  TraceEvent event;
  event.name = item[0].get<std::string>();
  event.category = item[1].get<std::string>();
  event.rank = item[2].get<int>();
  event.lane = item[3].get<int>();
  event.startUs = item[4].get<double>();
  event.durationUs = item[5].get<double>();
  event.args = item[6];
  return event;
}

std::string laneName(int lane) {
  if (lane == kComputeLane) return "compute";
  if (lane == kCommunicationLane) return "communication";
  return "lane " + std::to_string(lane);
}

nlohmann::json metadata(const char* name, int pid, int tid, nlohmann::json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

nlohmann::json completeEvent(const TraceEvent& event) {
  nlohmann::json out = {{"name", event.name}, {"cat", event.category}, {"ph", "X"},
                        {"pid", event.rank},  {"tid", event.lane},     {"ts", event.startUs},
                        {"dur", event.durationUs}};
  if (!event.args.is_null()) out["args"] = event.args;
  return out;
}

}  // namespace

TraceClock::TraceClock()
    : unixMinusSteadyUs_(common::unixSeconds() * 1e6 -
                         std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count()) {}

std::string encodeTraceEvents(const std::vector<TraceEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const TraceEvent& event : events) {
    out.push_back({event.name, event.category, event.rank, event.lane, event.startUs, event.durationUs, event.args});
  }
  return out.dump();
}

std::vector<TraceEvent> decodeTraceEvents(const std::string& text) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    throw std::invalid_argument(std::string("malformed trace events: ") + error.what() +
                                "; the text must come from encodeTraceEvents");
  }
  if (!parsed.is_array()) {
    throw std::invalid_argument("malformed trace events: expected an array; the text must come from encodeTraceEvents");
  }
  std::vector<TraceEvent> events;
  events.reserve(parsed.size());
  for (size_t i = 0; i < parsed.size(); ++i) events.push_back(decodeEvent(i, parsed[i]));
  return events;
}

void writeChromeTrace(const std::string& path, const std::vector<TraceEvent>& events) {
  std::set<int> ranks;
  std::set<std::pair<int, int>> lanes;
  for (const TraceEvent& event : events) {
    ranks.insert(event.rank);
    lanes.insert({event.rank, event.lane});
  }
  std::vector<nlohmann::json> lines;
  for (const int rank : ranks) {
    lines.push_back(metadata("process_name", rank, 0, {{"name", "rank " + std::to_string(rank)}}));
    lines.push_back(metadata("process_sort_index", rank, 0, {{"sort_index", rank}}));
  }
  for (const auto& [rank, lane] : lanes) {
    lines.push_back(metadata("thread_name", rank, lane, {{"name", laneName(lane)}}));
    lines.push_back(metadata("thread_sort_index", rank, lane, {{"sort_index", lane}}));
  }
  for (const TraceEvent& event : events) lines.push_back(completeEvent(event));

  common::writeFileAtomically(path, [&](std::ostream& out) {
    out << "{\"traceEvents\": [\n";
    for (size_t i = 0; i < lines.size(); ++i) out << lines[i].dump() << (i + 1 < lines.size() ? ",\n" : "\n");
    out << "],\n\"displayTimeUnit\": \"ms\"}\n";
  });
}

}  // namespace dtbench::trainer
