// Topologies as graphs, before any bytes move: every generator's Schedule is a correct all-reduce
// (verifySchedule), and each topology's own invariant holds (ring: one cycle; tree: the reduce graph
// reaches the root from every rank exactly once; star: one hub; clique: complete; hierarchical:
// only leaders cross hosts).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "comm/topology/clique.h"
#include "comm/topology/hierarchical.h"
#include "comm/topology/hosts.h"
#include "comm/topology/ring.h"
#include "comm/topology/registry.h"
#include "comm/topology/schedule.h"
#include "comm/topology/tree.h"

using namespace dtbench::comm;

namespace {

std::map<int, std::set<int>> successors(const Schedule& s) {
  std::map<int, std::set<int>> next;
  for (const auto& [src, dst] : scheduleEdges(s)) next[src].insert(dst);
  return next;
}

}  // namespace

TEST_CASE("every topology's schedule is a correct all-reduce for world sizes 1 to 8", "[schedule]") {
  for (int n = 1; n <= 8; ++n)
    for (int perHost = 1; perHost <= n; ++perHost) {
      const HostLayout hosts = hostsFromRanksPerHost(n, perHost);
      for (const std::string& topology : topologyNames()) {
        if (topology == "native") continue;
        INFO(topology << " world " << n << " ranks per host " << perHost);
        const Schedule s = makeSchedule(topology, hosts);
        CHECK(s.worldSize == n);
        CHECK(verifySchedule(s) == "");
      }
    }
}

TEST_CASE("verifySchedule catches a lost transfer and a double count", "[schedule]") {
  Schedule lost = ringSchedule(4);
  lost.steps[1].transfers.pop_back();
  CHECK_THAT(verifySchedule(lost), Catch::Contains("contribution"));
  Schedule twice = ringSchedule(3);
  twice.steps.push_back(twice.steps.front());
  CHECK_FALSE(verifySchedule(twice).empty());
}

TEST_CASE("the ring is one cycle through all ranks", "[schedule][ring]") {
  for (int n = 2; n <= 8; ++n) {
    const auto next = successors(ringSchedule(n));
    REQUIRE(static_cast<int>(next.size()) == n);
    std::set<int> visited;
    int at = 0;
    for (int hop = 0; hop < n; ++hop) {
      REQUIRE(next.at(at).size() == 1);
      visited.insert(at);
      at = *next.at(at).begin();
    }
    CHECK(at == 0);
    CHECK(static_cast<int>(visited.size()) == n);
    CHECK(ringSchedule(n).steps.size() == static_cast<size_t>(2 * (n - 1)));
  }
  CHECK(ringSchedule(1).steps.empty());
}

TEST_CASE("ring and clique send 2(N-1)/N of the tensor per rank", "[schedule][ring][clique]") {
  for (int n = 2; n <= 6; ++n) {
    const int64_t numel = 60 * n;  // divisible: exact formula
    for (const Schedule& s : {ringSchedule(n), cliqueSchedule(n)}) {
      const auto bytes = scheduleTraffic(s, numel, 4);
      for (int r = 0; r < n; ++r) {
        int64_t sent = 0, received = 0;
        for (int p = 0; p < n; ++p) sent += bytes[r][p], received += bytes[p][r];
        CHECK(sent == 2 * (n - 1) * numel * 4 / n);
        CHECK(received == sent);
      }
    }
  }
}

TEST_CASE("the bus-bandwidth factor is what the ring's schedule sends per rank, nccl-tests' 2(N-1)/N",
          "[schedule][ring][busbw]") {
  CHECK(ringBusFactor(0) == 0);
  CHECK(ringBusFactor(1) == 0);  // one rank sends nothing
  CHECK(ringBusFactor(2) == 1);
  CHECK(ringBusFactor(4) == 1.5);
  CHECK(ringBusBandwidth(10.0, 4) == 15.0);
  CHECK(ringBusBandwidth(10.0, 1) == 0);
  for (int n = 2; n <= 8; ++n) {
    const int64_t numel = 840;  // divisible by every n: the schedule's bytes are exact
    const auto bytes = scheduleTraffic(ringSchedule(n), numel, 4);
    int64_t sent = 0;
    for (int p = 0; p < n; ++p) sent += bytes[0][p];
    CHECK(static_cast<double>(sent) == Approx(ringBusFactor(n) * numel * 4).epsilon(1e-15));
    CHECK(ringBytesPerRank(numel * 4, n) == sent);
  }
}

TEST_CASE("the tree's reduce graph reaches the root from every rank exactly once", "[schedule][tree]") {
  for (int n = 1; n <= 9; ++n) {
    const Tree tree = binaryTree(n);
    CHECK(verifyTree(tree) == "");
    const Schedule s = treeSchedule(tree, "tree");
    std::map<int, int> reduceSends;
    for (const Step& step : s.steps)
      for (const Transfer& t : step.transfers)
        if (t.reduce) {
          ++reduceSends[t.src];
          CHECK(t.dst == tree.parent[t.src]);
        }
    for (int r = 1; r < n; ++r) CHECK(reduceSends[r] == 1);
    CHECK(reduceSends.count(0) == 0);
  }
  Tree cycle{0, {-1, 2, 1}};
  CHECK_THAT(verifyTree(cycle), Catch::Contains("cycle"));
  CHECK(treeDepths(binaryTree(7)) == std::vector<int>{0, 1, 1, 2, 2, 2, 2});
}

TEST_CASE("the star has one hub that every transfer touches", "[schedule][star]") {
  for (int n = 2; n <= 8; ++n) {
    const Schedule s = treeSchedule(starTree(n), "star");
    for (const auto& [src, dst] : scheduleEdges(s)) CHECK((src == 0) != (dst == 0));
    CHECK(scheduleEdges(s).size() == static_cast<size_t>(2 * (n - 1)));
    const auto bytes = scheduleTraffic(s, 100, 4);
    int64_t hubReceived = 0;
    for (int r = 1; r < n; ++r) hubReceived += bytes[r][0];
    CHECK(hubReceived == (n - 1) * 400);
  }
}

TEST_CASE("the clique is complete", "[schedule][clique]") {
  for (int n = 2; n <= 7; ++n) CHECK(scheduleEdges(cliqueSchedule(n)).size() == static_cast<size_t>(n * (n - 1)));
}

TEST_CASE("binary-tree-star: a star inside each host and a binary tree over the leaders", "[schedule][hosts]") {
  const HostLayout hosts = hostsFromRanksPerHost(7, 2);  // {0,1} {2,3} {4,5} {6}
  const Tree tree = binaryTreeStar(hosts);
  CHECK(verifyTree(tree) == "");
  CHECK(tree.parent == std::vector<int>{-1, 0, 0, 2, 0, 4, 2});
}

TEST_CASE("hierarchical: only host leaders cross hosts and they form a ring", "[schedule][hosts]") {
  const HostLayout hosts = hostsFromRanksPerHost(5, 2);  // {0,1} {2,3} {4}: leaders 0 2 4
  const Schedule s = hierarchicalSchedule(hosts);
  std::set<std::pair<int, int>> crossing;
  for (const auto& [src, dst] : scheduleEdges(s)) {
    if (hosts.hostOf[src] != hosts.hostOf[dst]) crossing.insert({src, dst});
    else CHECK((src == hosts.leaderOf(hosts.hostOf[src]) || dst == hosts.leaderOf(hosts.hostOf[src])));
  }
  CHECK(crossing == std::set<std::pair<int, int>>{{0, 2}, {2, 4}, {4, 0}});
}

TEST_CASE("host layouts from names and from ranks per host", "[hosts]") {
  const HostLayout emulated = hostsFromRanksPerHost(5, 2);
  CHECK(emulated.hosts == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4}});
  CHECK(emulated.leaders() == std::vector<int>{0, 2, 4});
  const HostLayout named = hostsFromNames({"b", "a", "b", "a"});
  CHECK(named.hosts == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
  CHECK(named.hostOf == std::vector<int>{0, 1, 0, 1});
  CHECK_THROWS_WITH(hostsFromRanksPerHost(4, 0), Catch::Contains("--ranks-per-host"));
}

TEST_CASE("unknown topologies are rejected by name", "[schedule]") {
  CHECK_THROWS_WITH(Topology::parse("mesh"), Catch::Contains("mesh") && Catch::Contains("binary-tree-star"));
  CHECK_THROWS_WITH(makeSchedule("native", hostsFromRanksPerHost(2, 1)), Catch::Contains("no schedule"));
}

TEST_CASE("chunk ranges cover the tensor without gaps for any length", "[schedule]") {
  for (int64_t numel : {0, 1, 2, 7, 13, 1000003})
    for (int chunks = 1; chunks <= 6; ++chunks) {
      int64_t covered = 0;
      for (int c = 0; c < chunks; ++c) {
        const ElementRange r = chunkRange(numel, chunks, c, c + 1);
        CHECK(r.begin == covered);
        covered = r.end;
      }
      CHECK(covered == numel);
    }
}

TEST_CASE("segments per chunk follow the segment size, within bounds, as data", "[schedule][segments]") {
  const Schedule ring = ringSchedule(4);                           // 4 chunks
  CHECK(segmentCount(ring, 1 << 24, 4, 0) == 1);                   // no segmentation
  CHECK(segmentCount(ring, 1 << 20, 4, 1 << 20) == 1);             // 1 MB chunks of 1 MB segments
  CHECK(segmentCount(ring, 1 << 20, 4, 256 << 10) == 4);           // 1 MB chunks of 256 KB
  CHECK(segmentCount(ring, (1 << 20) + 1, 4, 256 << 10) == 4);     // the largest chunk, rounded down
  CHECK(segmentCount(ring, 1000, 4, 256 << 10) == 1);              // smaller than one segment
  CHECK(segmentCount(ring, 1 << 20, 4, 1) == kMaxSegments);        // at most kMaxSegments
  CHECK(segmentCount(Schedule{}, 1 << 20, 4, 1) == kMaxSegments);  // one chunk of 4 MB
  Schedule chunkless;
  chunkless.chunks = 0;
  CHECK(segmentCount(chunkless, 1 << 20, 4, 1) == 1);
  CHECK_THROWS_WITH(segmentCount(ring, 1 << 20, 4, -1), Catch::Contains(">= 0"));
}

TEST_CASE("segment ranges cut each chunk without gaps", "[schedule][segments]") {
  for (int64_t numel : {0, 1, 7, 13, 1000003})
    for (int chunks = 1; chunks <= 4; ++chunks)
      for (int segments : {1, 2, 3, 64}) {
        for (int c = 0; c < chunks; ++c) {
          const ElementRange chunk = chunkRange(numel, chunks, c, c + 1);
          int64_t covered = chunk.begin;
          for (int g = 0; g < segments; ++g) {
            const ElementRange r = segmentRange(numel, chunks, c, g, segments);
            CHECK(r.begin == covered);
            CHECK(r.size() >= chunk.size() / segments);
            CHECK(r.size() <= chunk.size() / segments + 1);
            covered = r.end;
          }
          CHECK(covered == chunk.end);
        }
      }
  // 10 elements in 2 chunks of 5, the second cut in 3: [5, 6), [6, 8), [8, 10).
  CHECK(segmentRange(10, 2, 1, 0, 3).begin == 5);
  CHECK(segmentRange(10, 2, 1, 0, 3).end == 6);
  CHECK(segmentRange(10, 2, 1, 1, 3).end == 8);
  CHECK(segmentRange(10, 2, 1, 2, 3).end == 10);
}

TEST_CASE("a slice holds exactly the transfers its first ranks send, step by step", "[schedule][slice]") {
  // ring and clique at every period that divides the world; hierarchical at whole hosts.
  for (int world : {1, 2, 6, 8, 12}) {
    for (int perHost : {1, 2, 3, 4}) {
      if (world % perHost != 0) continue;
      const HostLayout hosts = hostsFromRanksPerHost(world, perHost);
      for (const char* name : {"ring", "clique", "hierarchical"}) {
        const Topology topology = Topology::parse(name);
        for (int period = perHost; period <= world; period += perHost) {
          if (world % period != 0) continue;
          INFO(name << " world " << world << " per host " << perHost << " period " << period);
          const Schedule whole = topology.schedule(hosts);
          const Schedule slice = topology.slice(hosts, period);
          CHECK(slice.slicePeriod == period);
          CHECK(slice.worldSize == whole.worldSize);
          CHECK(slice.chunks == whole.chunks);
          REQUIRE(slice.steps.size() == whole.steps.size());
          for (size_t s = 0; s < whole.steps.size(); ++s) {
            std::vector<std::tuple<int, int, int, int, bool>> want, got;
            for (const Transfer& t : whole.steps[s].transfers)
              if (t.src < period) want.emplace_back(t.src, t.dst, t.firstChunk, t.endChunk, t.reduce);
            for (const Transfer& t : slice.steps[s].transfers)
              got.emplace_back(t.src, t.dst, t.firstChunk, t.endChunk, t.reduce);
            std::sort(want.begin(), want.end());
            std::sort(got.begin(), got.end());
            CHECK(got == want);
          }
        }
      }
    }
  }
  CHECK_THROWS_AS(Topology::parse("ring").slice(hostsFromRanksPerHost(6, 1), 4), std::invalid_argument);
  CHECK_THROWS_AS(Topology::parse("hierarchical").slice(hostsFromRanksPerHost(8, 2), 1), std::invalid_argument);
  CHECK_FALSE(Topology::parse("binary-tree-star").sliceable());
}

TEST_CASE("a sliceable topology's transfers per rank bound what each rank of its Schedule sends", "[schedule]") {
  // predict counts a large world's messages from it before making the Schedule (docs/predict.md).
  for (const Topology& topology : Topology::all()) {
    if (topology.native()) continue;
    for (const auto& [world, perHost] : {std::pair{8, 2}, {12, 4}, {16, 4}, {9, 3}}) {
      const HostLayout hosts = hostsFromRanksPerHost(world, perHost);
      const std::optional<int64_t> bound = topology.transfersPerRank(hosts);
      CHECK(bound.has_value() == topology.sliceable());
      if (!bound) continue;
      std::map<int, int64_t> sent;
      for (const Step& step : topology.schedule(hosts).steps)
        for (const Transfer& t : step.transfers) ++sent[t.src];
      int64_t most = 0;
      for (const auto& [rank, n] : sent) most = std::max(most, n);
      CAPTURE(topology.name(), world, perHost);
      CHECK(most <= *bound);
      if (topology.name() != "hierarchical") CHECK(most == *bound);  // ring and clique: exactly 2(N − 1)
    }
  }
}
