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
#include "comm/topology/tree.h"
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
#include "comm/topology/clique.h"
#include "comm/topology/registry.h"
#include "comm/topology/ring.h"
#include "comm/topology/schedule_walk.h"
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
  // empty, one element, or uneven, and items of many steps are in flight at once; both walks
  // (Note [Walking a Schedule]) give the same bits.
  for (int world = 2; world <= 5; ++world)
    for (const std::string& topology : kTopologies) {
      const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
      for (at::ScalarType type : {at::kFloat, at::kHalf})
        for (int64_t numel : {int64_t{1}, int64_t{13}, int64_t{world + 3}, int64_t{4099}}) {
          std::vector<at::Tensor> byWalk;
          for (const ScheduleWalk walk : {ScheduleWalk::kBothDirections, ScheduleWalk::kStepByStep}) {
            const auto results = runRanks<at::Tensor>(world, [&](PointToPoint& p2p) {
              at::Tensor t = input(numel, p2p.rank(), type);
              runSchedule(schedule, p2p, t, /*segmentBytes=*/8, walk);
              return t;
            });
            for (int r = 0; r < world; ++r) {
              INFO(topology << " world " << world << " rank " << r << " " << c10::toString(type) << " numel " << numel);
              CHECK(wrongElements(results[r], expected(numel, world)) == 0);
            }
            byWalk.push_back(results[0]);
          }
          CHECK(at::equal(byWalk[0], byWalk[1]));
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

// One operation on a rank's transport, in the order the rank did it: 's' a send posted, 'p' a
// receive posted, 'w' a send's wait() returned, 'r' a receive's wait() returned.
struct Event {
  char kind;
  int tag;
  int peer;
};

// Forwards to another PointToPoint and logs every operation as an Event.
class RecordingPointToPoint final : public PointToPoint {
 public:
  explicit RecordingPointToPoint(PointToPoint& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override {
    events.push_back({'s', tag, peer});
    return std::make_shared<LoggedWork>(inner_.send(tensor, peer, tag), events, Event{'w', tag, peer});
  }
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override {
    events.push_back({'p', tag, peer});
    return std::make_shared<LoggedWork>(inner_.recv(tensor, peer, tag), events, Event{'r', tag, peer});
  }
  std::vector<Event> events;

 private:
  struct LoggedWork final : Work {
    LoggedWork(WorkPtr inner, std::vector<Event>& log, Event done) : inner(std::move(inner)), log(log), done(done) {}
    void wait() override {
      inner->wait();
      log.push_back(done);
    }
    bool isCompleted() override { return inner->isCompleted(); }
    WorkPtr inner;
    std::vector<Event>& log;
    Event done;
  };
  PointToPoint& inner_;
};

// Positions in `events` of the events of `kind` that match `tag` and `peer` (-1: any), in order.
std::vector<int64_t> positionsOf(const std::vector<Event>& events, char kind, int tag = -1, int peer = -1) {
  std::vector<int64_t> found;
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == kind && (tag < 0 || events[i].tag == tag) && (peer < 0 || events[i].peer == peer))
      found.push_back(static_cast<int64_t>(i));
  return found;
}

// Position of the first event (kind, tag) in `events`, or of the last one with `last`; -1: none.
int64_t positionOf(const std::vector<Event>& events, char kind, int tag, bool last) {
  const std::vector<int64_t> found = positionsOf(events, kind, tag);
  if (found.empty()) return -1;
  return last ? found.back() : found.front();
}

// Every rank's events for one all-reduce of `numel` float32 elements (checked to be the exact sum).
std::vector<std::vector<Event>> recordRun(const Schedule& schedule, int64_t numel, int64_t segmentBytes) {
  return runRanks<std::vector<Event>>(schedule.worldSize, [&](PointToPoint& p2p) {
    RecordingPointToPoint recording(p2p);
    at::Tensor t = input(numel, p2p.rank(), at::kFloat);
    runSchedule(schedule, recording, t, segmentBytes);
    REQUIRE(wrongElements(t, expected(numel, schedule.worldSize)) == 0);
    return recording.events;
  });
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
      const auto events = recordRun(schedule, numel, segmentBytes);
      INFO(topology << " rank " << rank << " tags " << from << " -> " << to << " segment bytes " << segmentBytes);
      const int64_t forwarded = positionOf(events[rank], 's', to, /*last=*/false);
      const int64_t lastArrived = positionOf(events[rank], 'r', from, /*last=*/true);
      REQUIRE(forwarded >= 0);
      REQUIRE(lastArrived >= 0);
      CHECK((forwarded < lastArrived) == pipelined);
    }
  }
}

TEST_CASE("a rank posts the receives from its parent before its first send to it", "[executor][order]") {
  // Note [Walking a Schedule]: a tree's broadcast lands where the rank's own reduce contribution
  // left from, and cannot arrive before the parent received that, so it is posted when the run
  // starts: a transport that sends nothing until the receiver asked for it (Gloo, Open MPI's
  // rendezvous) gets every request before the data flowing the other way.
  const int64_t numel = 64 << 10;
  const std::vector<std::pair<std::string, HostLayout>> cases{{"tree", hostsFromRanksPerHost(5, 1)},
                                                              {"star", hostsFromRanksPerHost(3, 1)},
                                                              {"binary-tree-star", hostsFromRanksPerHost(6, 2)}};
  for (const auto& [topology, hosts] : cases) {
    const Tree tree = topology == "tree"   ? binaryTree(hosts.worldSize())
                      : topology == "star" ? starTree(hosts.worldSize())
                                           : binaryTreeStar(hosts);
    for (const int64_t segmentBytes : {int64_t{8 << 10}, int64_t{0}}) {
      const auto events = recordRun(makeSchedule(topology, hosts), numel, segmentBytes);
      for (int r = 0; r < hosts.worldSize(); ++r) {
        if (r == tree.root) continue;
        const int parent = tree.parent[r];
        INFO(topology << " rank " << r << " parent " << parent << " segment bytes " << segmentBytes);
        const std::vector<int64_t> receives = positionsOf(events[r], 'p', -1, parent);
        const std::vector<int64_t> sends = positionsOf(events[r], 's', -1, parent);
        const std::vector<int64_t> sendWaits = positionsOf(events[r], 'w');
        REQUIRE(!receives.empty());
        REQUIRE(!sends.empty());
        CHECK(receives.back() < sends.front());
        CHECK(receives.back() < sendWaits.front());
      }
    }
  }
}

TEST_CASE("the step-by-step walk posts each step's receives with its item", "[executor][order]") {
  // Within one host comm::TopologyAllreduce walks step by step: a star's leaf asks for segment g's
  // broadcast (tag 1) only once its own segment g went up (tag 0).
  const auto events = runRanks<std::vector<Event>>(3, [&](PointToPoint& p2p) {
    RecordingPointToPoint recording(p2p);
    at::Tensor t = input(64 << 10, p2p.rank(), at::kFloat);
    runSchedule(makeSchedule("star", hostsFromRanksPerHost(3, 3)), recording, t, 8 << 10, ScheduleWalk::kStepByStep);
    REQUIRE(wrongElements(t, expected(64 << 10, 3)) == 0);
    return recording.events;
  });
  const std::vector<int64_t> broadcast = positionsOf(events[1], 'p', 1);
  const std::vector<int64_t> sent = positionsOf(events[1], 'w', 0);
  REQUIRE(broadcast.size() == 32);
  REQUIRE(sent.size() == 32);
  for (size_t g = 0; g < sent.size(); ++g) CHECK(sent[g] < broadcast[g]);
}

TEST_CASE("two ranks keep both directions busy: every receive is posted before the first send", "[executor][order]") {
  // ring and clique over 2 ranks: the all-gather's receive (the exchange's, for clique) lands where
  // the rank's first send left from, and is posted with the reduce-scatter's, before any send.
  for (const char* topology : {"ring", "clique"})
    for (const int64_t segmentBytes : {int64_t{8 << 10}, int64_t{0}}) {
      const auto events = recordRun(makeSchedule(topology, hostsFromRanksPerHost(2, 1)), 64 << 10, segmentBytes);
      for (int r = 0; r < 2; ++r) {
        INFO(topology << " rank " << r << " segment bytes " << segmentBytes);
        const std::vector<int64_t> receives = positionsOf(events[r], 'p');
        REQUIRE(positionsOf(events[r], 'p', 1).size() == receives.size() / 2);  // half of them the second step's
        CHECK(receives.back() < positionsOf(events[r], 's').front());
      }
    }
}

TEST_CASE("a root broadcasts segment k before segment k+1 of the reduction has arrived", "[executor][order]") {
  // star and tree over 3 ranks: the root receives the children's segments (tag 0) and sends the
  // sums back (tag 1); with 32 segments it forwards each one as soon as it is summed.
  for (const char* topology : {"star", "tree"}) {
    const auto events = recordRun(makeSchedule(topology, hostsFromRanksPerHost(3, 1)), 64 << 10, 8 << 10);
    for (int child = 1; child < 3; ++child) {
      const std::vector<int64_t> broadcast = positionsOf(events[0], 's', 1, child);
      const std::vector<int64_t> reduced = positionsOf(events[0], 'r', 0, child);
      REQUIRE(broadcast.size() == 32);
      REQUIRE(reduced.size() == 32);
      for (size_t k = 0; k + 1 < reduced.size(); ++k) {
        INFO(topology << " child " << child << " segment " << k);
        CHECK(broadcast[k] < reduced[k + 1]);
      }
    }
  }
}

TEST_CASE("a rank has at most two segments of its first step in flight", "[executor][order]") {
  // Note [Walking a Schedule]: segment k + 2 of the first step is sent only once segment k's send
  // completed, so that a transport which shares one link among its outstanding messages (Open MPI)
  // delivers the segments one after another, as the next level needs them.
  // A segment's item may send several messages (to several peers, or one per chunk): with m of
  // them per segment, the sends of segment k are sends[k m .. k m + m - 1].
  const int64_t numel = 64 << 10, segmentBytes = 4 << 10;
  for (const std::string& topology : kTopologies) {
    const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(4, 2));
    const size_t segments = static_cast<size_t>(ScheduleExecutor(segmentBytes).segmentsFor(schedule, numel, 4));
    REQUIRE(segments > 2);
    const auto events = recordRun(schedule, numel, segmentBytes);
    for (int r = 0; r < 4; ++r) {
      const std::vector<int64_t> sends = positionsOf(events[r], 's', 0);
      const std::vector<int64_t> done = positionsOf(events[r], 'w', 0);
      INFO(topology << " rank " << r);
      REQUIRE(sends.size() == done.size());
      REQUIRE(sends.size() % segments == 0);
      const size_t m = sends.size() / segments;
      for (size_t k = 0; m > 0 && k + 2 < segments; ++k) CHECK(done[k * m + m - 1] < sends[(k + 2) * m]);
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
  // Over one host the same; over several every point-to-point topology is cut into 128 KiB segments.
  for (const Topology& t : Topology::all()) {
    INFO(t.name());
    CHECK(t.defaultSegmentBytes(hostsFromRanksPerHost(4, 4)) == t.defaultSegmentBytes());
    CHECK(t.defaultSegmentBytes(hostsFromRanksPerHost(4, 2)) == (t.native() ? 0 : 128 << 10));
    // With the links' rate known: the rate and the pieces the walk keeps in flight per link set it;
    // one host crosses none.
    const HostLayout twoByTwo = hostsFromRanksPerHost(4, 2);
    CHECK(t.defaultSegmentBytes(twoByTwo, 200e6) ==
          (t.native() ? 0 : crossHostSegmentBytes(200e6, crossHostPiecesInFlight(t.schedule(twoByTwo), twoByTwo))));
    CHECK(t.defaultSegmentBytes(hostsFromRanksPerHost(4, 4), 200e6) == t.defaultSegmentBytes());
  }
  // 4 nodes x 1 at 200 Mbit/s: the clique's 12 pieces in flight need 16 KiB; a tree's 4 fit 32 KiB
  // (a millisecond); at 1 Gbit/s the tree takes a millisecond's 128 KiB, the clique 64 KiB.
  const HostLayout fourNodes = hostsFromRanksPerHost(4, 1);
  CHECK(Topology::parse("clique").defaultSegmentBytes(fourNodes, 200e6) == 16 << 10);
  CHECK(Topology::parse("tree").defaultSegmentBytes(fourNodes, 200e6) == 32 << 10);
  CHECK(Topology::parse("clique").defaultSegmentBytes(fourNodes, 1e9) == 64 << 10);
  CHECK(Topology::parse("tree").defaultSegmentBytes(fourNodes, 1e9) == 128 << 10);
  CHECK_THROWS_WITH(Topology::parse("torus"), Catch::Contains("ring"));
}

TEST_CASE("the segment across hosts is about a millisecond of the slowest link", "[executor][pipeline]") {
  CHECK(crossHostSegmentBytes(std::nullopt) == kCrossHostSegmentBytes);
  CHECK(kCrossHostSegmentBytes == 128 << 10);
  CHECK(crossHostSegmentBytes(200e6) == 32 << 10);   // 25,000 bytes per ms: 2^14.6
  CHECK(crossHostSegmentBytes(1e9) == 128 << 10);    // 125,000: 2^16.9
  CHECK(crossHostSegmentBytes(300e6) == 32 << 10);   // 37,500: 2^15.2
  CHECK(crossHostSegmentBytes(400e6) == 64 << 10);   // 50,000: 2^15.6
  CHECK(crossHostSegmentBytes(10e9) == 1 << 20);     // at most 1 MiB
  CHECK(crossHostSegmentBytes(400e9) == 1 << 20);
  CHECK(crossHostSegmentBytes(50e6) == 16 << 10);    // 6,250 bytes: at least 16 KiB
  CHECK(crossHostSegmentBytes(1) == 16 << 10);
  CHECK_THROWS_WITH(crossHostSegmentBytes(0.0), Catch::Contains("positive"));
  CHECK_THROWS_WITH(crossHostSegmentBytes(-1e9), Catch::Contains("positive"));
}

TEST_CASE("the segment across hosts keeps the pieces in flight within the link's queue", "[executor][pipeline]") {
  // The queue holds 10 ms of the link: 250,000 bytes at 200 Mbit/s, 1,250,000 at 1 Gbit/s. The
  // segment is the largest power of two with which the pieces fit, when that is under a millisecond.
  CHECK(kLinkQueueSeconds == 0.010);
  CHECK(crossHostSegmentBytes(200e6, 0) == 32 << 10);   // not known: a millisecond alone
  CHECK(crossHostSegmentBytes(200e6, 4) == 32 << 10);   // 62,500 each: the millisecond is smaller
  CHECK(crossHostSegmentBytes(200e6, 7) == 32 << 10);   // 35,714: 2^15.1
  CHECK(crossHostSegmentBytes(200e6, 8) == 16 << 10);   // 31,250: 2^14.9, and 32 KiB would not fit
  CHECK(crossHostSegmentBytes(200e6, 12) == 16 << 10);  // 20,833
  CHECK(crossHostSegmentBytes(200e6, 60) == 16 << 10);  // 4,166: at least 16 KiB
  CHECK(crossHostSegmentBytes(1e9, 8) == 128 << 10);    // 156,250
  CHECK(crossHostSegmentBytes(1e9, 12) == 64 << 10);    // 104,166
  CHECK(crossHostSegmentBytes(1e9, 28) == 32 << 10);    // 44,642
  CHECK(crossHostSegmentBytes(std::nullopt, 12) == kCrossHostSegmentBytes);  // no rate: no queue either
  CHECK_THROWS_WITH(crossHostSegmentBytes(1e9, -1), Catch::Contains(">= 0"));
}

TEST_CASE("pieces in flight per link follow the walk", "[executor][pipeline]") {
  // A clique over N hosts x 1: each rank posts the first step's window (2 segments) to its N - 1 peers,
  // and in the steady state two segments of the second step: 4 (N - 1) on its uplink; each peer keeps
  // 4 on the way to it: 4 (N - 1) on its downlink too.
  for (int n : {2, 3, 4, 8}) {
    INFO(n);
    const HostLayout hosts = hostsFromRanksPerHost(n, 1);
    CHECK(crossHostPiecesInFlight(cliqueSchedule(n), hosts) == 4 * (n - 1));
  }
  // A ring over 2 hosts x 1: two steps of one piece each, the window of the first: 4.
  CHECK(crossHostPiecesInFlight(ringSchedule(2), hostsFromRanksPerHost(2, 1)) == 4);
  // Within one host nothing crosses a link; with two ranks per host, the uplink carries both ranks'.
  CHECK(crossHostPiecesInFlight(cliqueSchedule(4), hostsFromRanksPerHost(4, 4)) == 0);
  CHECK(crossHostPiecesInFlight(cliqueSchedule(4), hostsFromRanksPerHost(4, 2)) == 16);
  // A transfer of several chunks is a piece per chunk in each segment.
  Schedule wide{"wide", 2, 3, {Step{{Transfer{0, 1, 0, 3, true}}}}};
  CHECK(crossHostPiecesInFlight(wide, hostsFromRanksPerHost(2, 1)) == 2 * 3);
  CHECK_THROWS_WITH(crossHostPiecesInFlight(cliqueSchedule(4), hostsFromRanksPerHost(3, 1)),
                    Catch::Contains("3 ranks") && Catch::Contains("for 4"));
}

TEST_CASE("one host's slice counts the pieces in flight of a Schedule that repeats every host", "[executor][pipeline]") {
  for (const char* name : {"ring", "clique", "hierarchical"})
    for (const auto& [world, perHost] : {std::pair{4, 1}, {6, 2}, {8, 2}, {12, 3}, {16, 4}}) {
      INFO(name << " over " << world << " ranks, " << perHost << " per host");
      const Topology t = Topology::parse(name);
      const HostLayout hosts = hostsFromRanksPerHost(world, perHost);
      CHECK(crossHostPiecesInFlight(t.slice(hosts, perHost), hosts) == crossHostPiecesInFlight(t.schedule(hosts), hosts));
    }
  // A slice must cover whole hosts of consecutive ranks.
  CHECK_THROWS_WITH(crossHostPiecesInFlight(ringSlice(8, 1), hostsFromRanksPerHost(8, 2)), Catch::Contains("whole hosts"));
  // A large world's segment comes from the slice: 4096 ranks, 8 per host (the whole ring has 8190
  // steps of 4096 transfers). Its last rank of a host keeps a piece per step on the diagonal in
  // flight, up to kMaxSegments: more than fit the queue at 1 Gbit/s above 16 KiB.
  const HostLayout large = hostsFromRanksPerHost(4096, 8);
  CHECK(Topology::parse("ring").defaultSegmentBytes(large, 1e9) == 16 << 10);
  CHECK(large.consecutiveHostSize() == 8);
  CHECK(hostsFromRanksPerHost(10, 4).consecutiveHostSize() == 0);  // the last host holds 2
  CHECK(hostsFromNames({"a", "b", "a", "b"}).consecutiveHostSize() == 0);
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
