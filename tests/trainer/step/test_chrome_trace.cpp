#include "catch_torch.h"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir.h"
#include "trainer/step/chrome_trace.h"

using dtbench::testing::TempDir;
using dtbench::trainer::decodeTraceEvents;
using dtbench::trainer::encodeTraceEvents;
using dtbench::trainer::kCommunicationLane;
using dtbench::trainer::kComputeLane;
using dtbench::trainer::TraceEvent;
using dtbench::trainer::writeChromeTrace;

namespace {

std::vector<TraceEvent> sampleEvents() {
  return {
      {"forward", "step", 0, kComputeLane, 1700000000123456.25, 1234.5, {{"step", 3}}},
      {"bucket 0", "allreduce", 0, kCommunicationLane, 1700000000124000.0, 0.1, {{"bytes", 1048576}}},
      {"backward \"quoted\"\n", "step", 1, kComputeLane, 1700000000123999.75, 2000.0 / 3.0, nullptr},
  };
}

}  // namespace

TEST_CASE("trace events survive encoding and decoding exactly", "[chrome_trace]") {
  const auto events = sampleEvents();
  const auto decoded = decodeTraceEvents(encodeTraceEvents(events));
  REQUIRE(decoded.size() == events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(decoded[i].name == events[i].name);
    CHECK(decoded[i].category == events[i].category);
    CHECK(decoded[i].rank == events[i].rank);
    CHECK(decoded[i].lane == events[i].lane);
    CHECK(decoded[i].startUs == events[i].startUs);  // bit for bit, not approximately
    CHECK(decoded[i].durationUs == events[i].durationUs);
    CHECK(decoded[i].args == events[i].args);
  }
  CHECK(decodeTraceEvents(encodeTraceEvents({})).empty());
}

TEST_CASE("text that encodeTraceEvents did not write is refused", "[chrome_trace]") {
  for (const std::string bad : {"", "not json", "{}", "[1]", R"([["a","b",0,0,1.0,2.0]])",
                                R"([["a","b","0",0,1.0,2.0,null]])", R"([["a",1,0,0,1.0,2.0,null]])",
                                R"([["a","b",0,0,"1",2.0,null]])", R"([["a","b",0,0,1.0,2.0,null])"}) {
    INFO(bad);
    CHECK_THROWS_AS(decodeTraceEvents(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(decodeTraceEvents("[[]]"), Catch::Contains("event 0") && Catch::Contains("encodeTraceEvents"));
}

TEST_CASE("the Chrome trace has complete events and names every rank and lane", "[chrome_trace]") {
  TempDir tmp;
  const std::string path = tmp / "timeline.json";
  writeChromeTrace(path, sampleEvents());
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  CHECK(trace.at("displayTimeUnit") == "ms");
  const auto& events = trace.at("traceEvents");
  REQUIRE(events.is_array());

  std::map<int, std::string> processNames;
  std::map<std::pair<int, int>, std::string> laneNames;
  std::vector<nlohmann::json> complete;
  for (const auto& event : events) {
    if (event.at("ph") == "M" && event.at("name") == "process_name") {
      processNames[event.at("pid").get<int>()] = event.at("args").at("name").get<std::string>();
    } else if (event.at("ph") == "M" && event.at("name") == "thread_name") {
      laneNames[{event.at("pid").get<int>(), event.at("tid").get<int>()}] =
          event.at("args").at("name").get<std::string>();
    } else if (event.at("ph") == "X") {
      complete.push_back(event);
    }
  }
  CHECK(processNames == std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}});
  CHECK(laneNames == std::map<std::pair<int, int>, std::string>{
                         {{0, 0}, "compute"}, {{0, 1}, "communication"}, {{1, 0}, "compute"}});

  REQUIRE(complete.size() == 3);
  CHECK(complete[0].at("name") == "forward");
  CHECK(complete[0].at("cat") == "step");
  CHECK(complete[0].at("pid") == 0);
  CHECK(complete[0].at("tid") == 0);
  CHECK(complete[0].at("ts").get<double>() == 1700000000123456.25);
  CHECK(complete[0].at("dur").get<double>() == 1234.5);
  CHECK(complete[0].at("args").at("step") == 3);
  CHECK(complete[1].at("tid") == 1);
  CHECK(complete[1].at("args").at("bytes") == 1048576);
  CHECK(complete[2].at("name") == "backward \"quoted\"\n");
  CHECK(complete[2].at("pid") == 1);
  CHECK_FALSE(complete[2].contains("args"));
}

TEST_CASE("an empty trace is still a valid Chrome trace", "[chrome_trace]") {
  TempDir tmp;
  const std::string path = tmp / "timeline.json";
  writeChromeTrace(path, {});
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  CHECK(trace.at("traceEvents").empty());
}

TEST_CASE("an unwritable trace path is a clear error", "[chrome_trace]") {
  TempDir tmp;
  CHECK_THROWS_WITH(writeChromeTrace(tmp / "missing/timeline.json", sampleEvents()),
                    Catch::Contains("cannot write"));
}
