// Every point-to-point topology, run by the one executor over the in-process fixture (threads, no
// sockets), at world sizes 1 to 5: exact sums of small integers in float32, float16 and bfloat16,
// for lengths 0, 1, prime, not divisible by the world, and ~1M; counted traffic equals the
// schedule's own bytes; a missing peer times out naming it.
#include <catch2/catch.hpp>

#include <sstream>

#include "comm/counting_point_to_point.h"
#include "comm/topology/executor.h"
#include "comm/topology/topology.h"
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

TEST_CASE("counted traffic equals the schedule's bytes", "[executor][traffic]") {
  const int world = 3;
  const int64_t numel = 1001;
  for (const std::string& topology : kTopologies) {
    const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
    const auto want = scheduleTraffic(schedule, numel, 2);
    const auto sent = runRanks<std::vector<int64_t>>(world, [&](PointToPoint& p2p) {
      TrafficRecorder recorder(p2p.rank(), world);
      CountingPointToPoint counting(p2p, recorder);
      runSchedule(schedule, counting, input(numel, p2p.rank(), at::kHalf));
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

TEST_CASE("traffic CSV formats follow DESIGN.md", "[traffic]") {
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
