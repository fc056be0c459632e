// Every point-to-point topology, run by the one executor over the in-process fixture (threads, no
// sockets), at world sizes 1 to 5: exact sums of small integers in float32, float16 and bfloat16,
// for lengths 0, 1, prime, not divisible by the world, and ~1M, whole and cut into segments
// (pipelined, Note [Pipelined schedules]); counted traffic equals the schedule's own bytes; a
// missing peer times out naming it.
#include "catch_torch.h"
#include "comm/backends/in_process_transport.h"
#include "comm/point_to_point.h"
#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"
#include "comm/traffic/traffic_recorder.h"
#include "comm/work.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "comm/traffic/counting_point_to_point.h"
#include "comm/schedule_executor.h"
#include "comm/topology/registry.h"
#include "in_process_fixture.h"

using namespace dtbench::comm;
using dtbench::comm::testing::runRanks;

namespace {

// Rank r's element i is (i mod 5 + 1)(r + 1): sums stay below 256, exact in every element type.
at::Tensor input(int64_t numel, int rank, at::ScalarType type) {
  return ((at::arange(numel, at::kLong) % 5 + 1) * (rank + 1)).to(type);
}

at::Tensor expected(int64_t numel, int world) {
  return ((at::arange(numel, at::kLong) % 5 + 1) * (world * (world + 1) / 2)).to(at::kFloat);
}

int64_t wrongElements(const at::Tensor& result, const at::Tensor& want) {
  return result.to(at::kFloat).ne(want).sum().item<int64_t>();
}

const std::vector<std::string> kTopologies{"ring", "tree", "binary-tree-star", "star", "clique", "hierarchical"};

}  // namespace

TEST_CASE("every topology sums exactly at world sizes 1 to 5 and awkward lengths", "[executor]") {
  for (int world = 1; world <= 5; ++world)
    for (const std::string& topology : kTopologies) {
      const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
      for (at::ScalarType type : {at::kFloat, at::kHalf, at::kBFloat16})
        for (int64_t numel : {int64_t{0}, int64_t{1}, int64_t{13}, int64_t{world + 3}, int64_t{4099}}) {
          const auto results = runRanks<at::Tensor>(world, [&](PointToPoint& p2p) {
            at::Tensor t = input(numel, p2p.rank(), type);
            runSchedule(schedule, p2p, t);
            return t;
          });
          for (int r = 0; r < world; ++r) {
            INFO(topology << " world " << world << " rank " << r << " " << c10::toString(type) << " numel " << numel);
            CHECK(results[r].scalar_type() == type);
            CHECK(wrongElements(results[r], expected(numel, world)) == 0);
          }
        }
    }
}

TEST_CASE("every topology sums a tensor of about 1M elements exactly", "[executor]") {
  const int world = 4;
  const int64_t numel = (1 << 20) + 3;
  for (const std::string& topology : kTopologies) {
    const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
    for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
      const auto results = runRanks<at::Tensor>(world, [&](PointToPoint& p2p) {
        at::Tensor t = input(numel, p2p.rank(), type);
        runSchedule(schedule, p2p, t);
        return t;
      });
      for (int r = 0; r < world; ++r) {
        INFO(topology << " rank " << r << " " << c10::toString(type));
        CHECK(wrongElements(results[r], expected(numel, world)) == 0);
      }
    }
  }
}

TEST_CASE("pipelined segments sum exactly for every topology, world size and length", "[executor][pipeline]") {
  // 8-byte segments cut even short chunks into many segments (up to kMaxSegments), so pieces are
  // empty, one element, or uneven, and up to two steps of items are in flight at once.
  for (int world = 2; world <= 5; ++world)
    for (const std::string& topology : kTopologies) {
      const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
      for (at::ScalarType type : {at::kFloat, at::kHalf})
        for (int64_t numel : {int64_t{1}, int64_t{13}, int64_t{world + 3}, int64_t{4099}}) {
          const auto results = runRanks<at::Tensor>(world, [&](PointToPoint& p2p) {
            at::Tensor t = input(numel, p2p.rank(), type);
            runSchedule(schedule, p2p, t, /*segmentBytes=*/8);
            return t;
          });
          for (int r = 0; r < world; ++r) {
            INFO(topology << " world " << world << " rank " << r << " " << c10::toString(type) << " numel " << numel);
            CHECK(wrongElements(results[r], expected(numel, world)) == 0);
          }
        }
    }
}

TEST_CASE("one executor reuses its workspace across sizes, types and schedules", "[executor][pipeline]") {
  const int world = 3;
  const std::vector<std::pair<std::string, int64_t>> calls{
      {"ring", 100000}, {"star", 7}, {"clique", 300001}, {"ring", 100000}, {"tree", 50000}, {"hierarchical", 12345}};
  const auto wrong = runRanks<int64_t>(world, [&](PointToPoint& p2p) {
    ScheduleExecutor executor(/*segmentBytes=*/4096);
    int64_t total = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      const at::ScalarType type = i % 2 == 0 ? at::kFloat : at::kBFloat16;
      at::Tensor t = input(calls[i].second, p2p.rank(), type);
      executor.run(makeSchedule(calls[i].first, hostsFromRanksPerHost(world, 2)), p2p, t);
      total += wrongElements(t, expected(calls[i].second, world));
    }
    return total;
  });
  for (int r = 0; r < world; ++r) CHECK(wrong[r] == 0);
}

namespace {

// Forwards to another PointToPoint and logs, in order, every send posted ('s', tag) and every
// receive whose wait() returned ('r', tag).
class RecordingPointToPoint final : public PointToPoint {
 public:
  explicit RecordingPointToPoint(PointToPoint& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override {
    events.emplace_back('s', tag);
    return inner_.send(tensor, peer, tag);
  }
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override {
    return std::make_shared<LoggedWork>(inner_.recv(tensor, peer, tag), events, tag);
  }
  std::vector<std::pair<char, int>> events;

 private:
  struct LoggedWork final : Work {
    LoggedWork(WorkPtr inner, std::vector<std::pair<char, int>>& log, int tag) : inner(std::move(inner)), log(log), tag(tag) {}
    void wait() override {
      inner->wait();
      log.emplace_back('r', tag);
    }
    bool isCompleted() override { return inner->isCompleted(); }
    WorkPtr inner;
    std::vector<std::pair<char, int>>& log;
    int tag;
  };
  PointToPoint& inner_;
};

// Position of the first event (kind, tag) in `events`, or of the last one with `last`.
int64_t positionOf(const std::vector<std::pair<char, int>>& events, char kind, int tag, bool last) {
  int64_t found = -1;
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i] == std::make_pair(kind, tag)) {
      found = static_cast<int64_t>(i);
      if (!last) break;
    }
  return found;
}

}  // namespace

TEST_CASE("a segment moves on to the next step before the step's last segment arrived", "[executor][pipeline]") {
  // ring, 2 ranks: a rank starts the all-gather (tag 1) of its first reduced segment before it
  // has received the last segment of the reduce-scatter (tag 0). tree, 4 ranks: rank 1 forwards
  // its first summed segment to the root (tag 1) before the last one from its child, rank 3
  // (tag 0), has arrived; the root's broadcast (tag 2) passes rank 1 on to rank 3 (tag 3) the same
  // way. Without segments (segmentBytes 0) each step waits for the whole previous one.
  const int64_t numel = 64 << 10;  // 256 KB of float32
  for (const int64_t segmentBytes : {int64_t{8 << 10}, int64_t{0}}) {
    const bool pipelined = segmentBytes > 0;
    for (const auto& c : std::vector<std::tuple<std::string, int, int, int, int>>{
             {"ring", 2, 0, 0, 1}, {"tree", 4, 1, 0, 1}, {"tree", 4, 1, 2, 3}}) {
      // (structured bindings cannot be captured by a lambda in C++17)
      const std::string& topology = std::get<0>(c);
      const int world = std::get<1>(c), rank = std::get<2>(c), from = std::get<3>(c), to = std::get<4>(c);
      const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 1));
      const auto events = runRanks<std::vector<std::pair<char, int>>>(world, [&](PointToPoint& p2p) {
        RecordingPointToPoint recording(p2p);
        at::Tensor t = input(numel, p2p.rank(), at::kFloat);
        runSchedule(schedule, recording, t, segmentBytes);
        REQUIRE(wrongElements(t, expected(numel, world)) == 0);
        return recording.events;
      });
      INFO(topology << " rank " << rank << " tags " << from << " -> " << to << " segment bytes " << segmentBytes);
      const int64_t forwarded = positionOf(events[rank], 's', to, /*last=*/false);
      const int64_t lastArrived = positionOf(events[rank], 'r', from, /*last=*/true);
      REQUIRE(forwarded >= 0);
      REQUIRE(lastArrived >= 0);
      CHECK((forwarded < lastArrived) == pipelined);
    }
  }
}

TEST_CASE("segments per chunk follow the segment size, within bounds", "[executor][pipeline]") {
  const Schedule ring = makeSchedule("ring", hostsFromRanksPerHost(4, 4));  // 4 chunks
  CHECK(ScheduleExecutor(0).segmentsFor(ring, 1 << 24, 4) == 1);            // no segmentation
  CHECK(ScheduleExecutor(1 << 20).segmentsFor(ring, 1 << 20, 4) == 1);      // 1 MB chunks of 1 MB segments
  CHECK(ScheduleExecutor(256 << 10).segmentsFor(ring, 1 << 20, 4) == 4);    // 1 MB chunks of 256 KB
  CHECK(ScheduleExecutor(256 << 10).segmentsFor(ring, 1000, 4) == 1);       // smaller than one segment
  CHECK(ScheduleExecutor(1).segmentsFor(ring, 1 << 20, 4) == ScheduleExecutor::kMaxSegments);
  CHECK_THROWS_WITH(ScheduleExecutor(-1), Catch::Contains(">= 0"));
  // Defaults by topology: multi-level schedules pipeline, ring and clique send whole chunks.
  for (const char* t : {"tree", "star", "binary-tree-star", "hierarchical"})
    CHECK(Topology::parse(t).defaultSegmentBytes() == 1 << 20);
  for (const char* t : {"native", "ring", "clique"}) CHECK(Topology::parse(t).defaultSegmentBytes() == 0);
  CHECK_THROWS_WITH(Topology::parse("torus"), Catch::Contains("ring"));
}

TEST_CASE("counted traffic equals the schedule's bytes", "[executor][traffic]") {
  const int world = 3;
  const int64_t numel = 1001;
  for (const std::string& topology : kTopologies) {
    const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
    const auto want = scheduleTraffic(schedule, numel, 2);
    const auto sent = runRanks<std::vector<int64_t>>(world, [&](PointToPoint& p2p) {
      TrafficRecorder recorder(p2p.rank(), world);
      CountingPointToPoint counting(p2p, recorder);
      runSchedule(schedule, counting, input(numel, p2p.rank(), at::kHalf), /*segmentBytes=*/64);
      std::vector<int64_t> row = recorder.sentTo();
      row.push_back(static_cast<int64_t>(timelineRows(recorder).size()));
      return row;
    });
    for (int r = 0; r < world; ++r) {
      INFO(topology << " rank " << r);
      for (int p = 0; p < world; ++p) CHECK(sent[r][p] == want[r][p]);
      int64_t total = 0;
      for (int p = 0; p < world; ++p) total += want[r][p];
      CHECK((sent[r][world] > 0) == (total > 0));  // timeline rows exist exactly when bytes moved
    }
  }
}

TEST_CASE("a receive whose peer never sends times out naming the peer", "[executor][failure]") {
  CHECK_THROWS_WITH(
      (runRanks<int>(
          2,
          [](PointToPoint& p2p) {
            if (p2p.rank() == 0) p2p.recv(at::zeros({4}), 1, 0)->wait();
            return 0;
          },
          std::chrono::milliseconds(200))),
      Catch::Contains("from rank 1") && Catch::Contains("did not complete"));
}

TEST_CASE("a size mismatch between sender and receiver is reported", "[executor][failure]") {
  CHECK_THROWS_WITH((runRanks<int>(2,
                                   [](PointToPoint& p2p) {
                                     if (p2p.rank() == 1) p2p.send(at::zeros({3}), 0, 0)->wait();
                                     if (p2p.rank() == 0) p2p.recv(at::zeros({4}), 1, 0)->wait();
                                     return 0;
                                   })),
                    Catch::Contains("disagree"));
}

TEST_CASE("point-to-point rejects unsupported tensors by name", "[executor]") {
  InProcessWorld world(2);
  InProcessPointToPoint p2p(world, 0);
  CHECK_THROWS_WITH(p2p.send(at::zeros({2}, at::kDouble), 1, 0), Catch::Contains("Double") && Catch::Contains("bfloat16"));
  CHECK_THROWS_WITH(p2p.send(at::zeros({2}), 0, 0), Catch::Contains("peer 0"));
}

TEST_CASE("traffic CSV formats follow docs/run-directory.md", "[traffic]") {
  TrafficRecorder recorder(1, 4);
  recorder.recordSend(2, 100);
  recorder.recordModelledAllreduce(400);  // 2(N-1)/N * 400 = 600 to rank 2
  std::ostringstream traffic, timeline;
  writeTrafficCsv(traffic, trafficRows(recorder));
  CHECK(traffic.str() == "src,dst,bytes,kind\n1,2,100,counted\n1,2,600,modelled\n");
  writeTimelineCsv(timeline, timelineRows(recorder));
  CHECK_THAT(timeline.str(), Catch::StartsWith("t_start_s,src,dst,bytes\n") && Catch::EndsWith(",1,2,100\n"));
  CHECK(recorder.bytesSent() == 700);
  CHECK(recorder.bytesReceived() == 600);
}
