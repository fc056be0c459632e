// The network model (experiments/predict/network_model.h) against hand-worked executions of the
// Schedules, and its bytes against the Schedules' own.
#include <catch2/catch.hpp>

#include "comm/topology/link_bound.h"
#include "comm/topology/registry.h"
#include "comm/topology/schedule.h"
#include "experiments/predict/network_model.h"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

using dtbench::predict::LinkClass;
using dtbench::predict::Network;
using dtbench::predict::simulateSchedule;

namespace {

Network oneRankPerNode(int n, double bandwidth, double latency) {
  Network net;
  net.worldSize = n;
  net.ranksPerNode = 1;
  net.inter = {bandwidth, latency};
  net.intra = {bandwidth, latency};
  return net;
}

}  // namespace

TEST_CASE("A ring of 4 on equal links takes 2(N-1) steps of one chunk, each notice + data + chunk / bandwidth",
          "[predict][network]") {
  // 4 Mi float32 elements = 16 MiB, chunk = 4 MiB; beta = 1e8 B/s, alpha = 100 us: every step, the
  // receiver's notice (alpha), then the data (alpha + 4194304 / 1e8); 6 steps.
  const Network net = oneRankPerNode(4, 1e8, 1e-4);
  const auto ring = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(4, 1));
  const auto c = simulateSchedule(ring, net, 4 << 20, 4, 0);
  CHECK(c.seconds == Approx(6 * (2e-4 + 4194304 / 1e8)).epsilon(1e-12));
  CHECK(c.messages == 4 * 6);
  for (int r = 0; r < 4; ++r) CHECK(c.bytesSent[r] == 6 * 4194304);
}

TEST_CASE("A collective's time splits into the time bytes move and the time only latencies run",
          "[predict][network]") {
  // The ring of 4 above: each step's notice and data latency (2 alpha) with nothing moving, then the
  // chunk alone: latency 6 x 2 alpha, bandwidth 6 x 4 MiB / beta.
  const auto ring4 = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(4, 1));
  const auto c = simulateSchedule(ring4, oneRankPerNode(4, 1e8, 1e-4), 4 << 20, 4, 0);
  CHECK(c.latencyS == Approx(6 * 2e-4).epsilon(1e-9));
  CHECK(c.bandwidthS == Approx(6 * 4194304 / 1e8).epsilon(1e-9));
  CHECK(c.latencyS + c.bandwidthS == Approx(c.seconds).epsilon(1e-12));
  // Two ranks with eager messages: one alpha a step, then S/2 bytes.
  Network eager = oneRankPerNode(2, 1e9, 5e-5);
  eager.inter.eagerBytes = 2000;
  const auto ring2 = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(2, 1));
  const auto e = simulateSchedule(ring2, eager, 1000, 4, 0);
  CHECK(e.latencyS == Approx(2 * 5e-5).epsilon(1e-9));
  CHECK(e.bandwidthS == Approx(2 * 2000 / 1e9).epsilon(1e-9));
  // No latency: all of it is bandwidth. A clique on links far faster than its message overhead: all
  // of it (but the bytes' femtoseconds) is latency.
  const auto free = simulateSchedule(ring4, oneRankPerNode(4, 1e8, 0), 4 << 20, 4, 0);
  CHECK(free.latencyS == Approx(0).margin(1e-12));
  CHECK(free.bandwidthS == Approx(free.seconds).epsilon(1e-12));
  Network overhead = oneRankPerNode(4, 1e15, 0);
  overhead.inter.messageOverheadS = 1e-3;
  const auto clique = dtbench::comm::makeSchedule("clique", dtbench::comm::hostsFromRanksPerHost(4, 1));
  const auto q = simulateSchedule(clique, overhead, 1 << 12, 4, 0);
  CHECK(q.bandwidthS < 1e-9);
  CHECK(q.latencyS > 10e-3);
  // A pipelined ring over segments: its latency is hidden behind the segments moving, but for the fill.
  const auto piped = simulateSchedule(ring4, oneRankPerNode(4, 1e8, 1e-4), 4 << 20, 4, 1 << 18);
  CHECK(piped.latencyS + piped.bandwidthS == Approx(piped.seconds).epsilon(1e-12));
  CHECK(piped.latencyS < c.latencyS / 2);
  CHECK(piped.bandwidthS >= 6 * 4194304 / 1e8 * (1 - 1e-9));
}

TEST_CASE("A tree whose root link is slow: its children share it, then the broadcast shares it again",
          "[predict][network]") {
  // tree over 4 ranks, one per node: parent(1) = parent(2) = 0, parent(3) = 1. Whole chunks, no
  // latency, S bytes, beta per link. Equal links: 3->1 and 2->0 in [0, S/b]; 1->0 alone to 2S/b;
  // 0->1 and 0->2 share 0's uplink to 4S/b; 1->3 to 5S/b.
  const double s = 8e6, beta = 1e8;
  const auto tree = dtbench::comm::makeSchedule("tree", dtbench::comm::hostsFromRanksPerHost(4, 1));
  Network net = oneRankPerNode(4, beta, 0);
  CHECK(simulateSchedule(tree, net, 2000000, 4, 0).seconds == Approx(5 * s / beta).epsilon(1e-12));
  // Root link at beta/2: 2->0 moves S/2 alone by S/b; then 2->0 and 1->0 get beta/4 each: 2->0 done
  // at 3S/b, 1->0 has S/2 left, alone at beta/2: 4S/b. Broadcast: two at beta/4: 8S/b. 1->3: 9S/b.
  net.nodeBytesPerSecond = {beta / 2, beta, beta, beta};
  CHECK(simulateSchedule(tree, net, 2000000, 4, 0).seconds == Approx(9 * s / beta).epsilon(1e-12));
}

TEST_CASE("Latency: the receiver's notice, then the data, each alpha", "[predict][network]") {
  // Two ranks, ring: 2 steps of one chunk each (S/2 = 2000 bytes). Across hosts the all-gather's
  // receive is posted ahead (comm/topology/schedule_walk.h): its notice left at the start, so step 1
  // costs alpha + (S/2) / beta after step 0's 2 alpha + (S/2) / beta.
  const Network net = oneRankPerNode(2, 1e9, 5e-5);
  const auto ring = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(2, 1));
  CHECK(simulateSchedule(ring, net, 1000, 4, 0).seconds == Approx(3e-4 / 2 + 2 * 2000 / 1e9).epsilon(1e-12));
  CHECK(simulateSchedule(ring, net, 0, 4, 0).seconds == 0);
  // Within one host the walk is step by step: each step's notice, then its data: 2 (2 alpha + (S/2) / beta).
  Network host = net;
  host.ranksPerNode = 2;
  CHECK(simulateSchedule(ring, host, 1000, 4, 0).seconds == Approx(2 * (1e-4 + 2000 / 1e9)).epsilon(1e-12));
  // An eager message leaves without the notice: alpha + (S/2) / beta per step.
  Network eager = net;
  eager.inter.eagerBytes = 2000;
  CHECK(simulateSchedule(ring, eager, 1000, 4, 0).seconds == Approx(2 * (5e-5 + 2000 / 1e9)).epsilon(1e-12));
}

TEST_CASE("Predicted bytes per rank and per node link equal the Schedule's, segments included", "[predict][network]") {
  const dtbench::comm::HostLayout hosts = dtbench::comm::hostsFromRanksPerHost(6, 2);
  Network net;
  net.worldSize = 6;
  net.ranksPerNode = 2;
  net.intra = {1e10, 1e-6};
  net.inter = {1e9, 1e-5};
  for (const std::string& name : dtbench::comm::topologyNames()) {
    if (name == "native") continue;
    INFO(name);
    const auto schedule = dtbench::comm::makeSchedule(name, hosts);
    for (int64_t segment : {int64_t{0}, int64_t{1024}}) {
      const int64_t numel = 100003;
      const auto c = simulateSchedule(schedule, net, numel, 4, segment);
      const auto traffic = dtbench::comm::scheduleTraffic(schedule, numel, 4);
      for (int r = 0; r < 6; ++r)
        CHECK(c.bytesSent[r] == std::accumulate(traffic[r].begin(), traffic[r].end(), int64_t{0}));
      const auto links = dtbench::comm::hostLinkBytes(schedule, hosts, numel, 4);
      CHECK(c.nodeUp == links.up);
      CHECK(c.nodeDown == links.down);
      CHECK(c.seconds > 0);
    }
  }
}

TEST_CASE("A notice waits behind data on its connection unless posted ahead: a tree's two phases", "[predict][network]") {
  // Tree of 2 (rank 1 -> root 0, then back), S = 8 MB in two 4 MB segments, no latency.
  const auto tree = dtbench::comm::makeSchedule("tree", dtbench::comm::hostsFromRanksPerHost(2, 1));
  // Across hosts rank 1 posts its broadcast receives ahead, before its first send: the root sends
  // segment 0 down (S/2b to S/b) while segment 1 goes up: 1.5 S/b.
  const Network net = oneRankPerNode(2, 1e8, 0);
  CHECK(simulateSchedule(tree, net, 2000000, 4, 4000000).seconds == Approx(1.5 * 8e6 / 1e8).epsilon(1e-12));
  // Whole chunks: nothing to overlap, 2 S/b.
  CHECK(simulateSchedule(tree, net, 2000000, 4, 0).seconds == Approx(2 * 8e6 / 1e8).epsilon(1e-12));
  // Within one host (step by step) rank 1 sends both segments up (done at S/2b and S/b) and posts its
  // receive of the first segment down at S/2b, but its notice queues behind the second segment up:
  // it reaches the root at S/b. Down: S/2b each, one after the other: 2 S/b in all.
  Network host = net;
  host.ranksPerNode = 2;
  CHECK(simulateSchedule(tree, host, 2000000, 4, 4000000).seconds == Approx(2 * 8e6 / 1e8).epsilon(1e-12));
  // A star of 3 with whole chunks: both leaves share the hub's downlink (2 x 4 MiB at b/2), then its
  // uplink: 16 MiB / b.
  const auto star = dtbench::comm::makeSchedule("star", dtbench::comm::hostsFromRanksPerHost(3, 1));
  CHECK(simulateSchedule(star, oneRankPerNode(3, 1e8, 0), 1 << 20, 4, 0).seconds ==
        Approx(2 * 8388608 / 1e8).epsilon(1e-12));
}

TEST_CASE("A star's hub sends segment k down while segment k + 1 comes up", "[predict][network]") {
  // Star of 3 nodes: leaves 1 and 2 send to hub 0, which sends the sums back. S = 12 MB in G = 4
  // segments of 3 MB, beta per link, no latency. Both leaves' segments share the hub's downlink
  // (2 x 3 MB at b/2: 0.06 s a segment), and the hub's sums of segment k share its uplink while
  // segment k + 1 comes up: (G + 1) x 0.06 s = 0.30 s, against 2 G x 0.06 s = 0.48 s for one phase
  // after the other.
  const auto star = dtbench::comm::makeSchedule("star", dtbench::comm::hostsFromRanksPerHost(3, 1));
  const Network net = oneRankPerNode(3, 1e8, 0);
  CHECK(simulateSchedule(star, net, 3000000, 4, 3000000).seconds == Approx(5 * 2 * 3e6 / 1e8).epsilon(1e-12));
  // Within one host, step by step, the same star takes the two phases in turn.
  Network host = net;
  host.ranksPerNode = 3;
  CHECK(simulateSchedule(star, host, 3000000, 4, 3000000).seconds > 0.4);
}

TEST_CASE("Bad networks are refused", "[predict][network]") {
  const auto ring = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(4, 1));
  Network net = oneRankPerNode(4, 1e8, 0);
  net.ranksPerNode = 3;
  CHECK_THROWS_WITH(simulateSchedule(ring, net, 10, 4, 0), Catch::Contains("must divide"));
  net = oneRankPerNode(4, 0, 0);
  CHECK_THROWS_WITH(simulateSchedule(ring, net, 10, 4, 0), Catch::Contains("bandwidth"));
  net = oneRankPerNode(2, 1e8, 0);
  CHECK_THROWS_WITH(simulateSchedule(ring, net, 10, 4, 0), Catch::Contains("4 ranks"));
}

TEST_CASE("A node's slice of a Schedule that repeats along the ranks simulates as the whole", "[predict][network]") {
  // ring, clique and hierarchical (and native, modelled as ring or hierarchical) repeat every node on
  // links of one rate: the slice of node 0's senders (Schedule::slicePeriod) must give the whole
  // Schedule's time, bytes per rank and per node link, and message count. numel is a multiple of
  // every chunk count and segment count here, so chunks are of equal size and the times equal.
  struct Case {
    std::string topology;
    int world, perNode;
    int64_t segmentBytes;
  };
  const std::vector<Case> cases{{"ring", 8, 1, 0},         {"ring", 8, 2, 0},        {"ring", 12, 4, 0},
                                {"ring", 8, 2, 1 << 16},   {"clique", 6, 1, 0},      {"clique", 6, 3, 0},
                                {"hierarchical", 8, 2, 0}, {"hierarchical", 16, 4, 1 << 16},
                                {"hierarchical", 6, 3, 1 << 15}};
  for (const Case& k : cases) {
    INFO(k.topology << " over " << k.world << " ranks, " << k.perNode << " per node, segments " << k.segmentBytes);
    Network net;
    net.worldSize = k.world;
    net.ranksPerNode = k.perNode;
    net.intra = {2e9, 5e-6};
    net.inter = {1e8, 5e-5};
    net.intra.messageOverheadS = 1e-6;  // each rank's issues counted in the rank that stands for it
    net.inter.messageOverheadS = 2e-6;
    const auto hosts = dtbench::comm::hostsFromRanksPerHost(k.world, k.perNode);
    const auto topology = dtbench::comm::Topology::parse(k.topology);
    REQUIRE(topology.sliceable());
    const auto whole = topology.schedule(hosts);
    const auto slice = topology.slice(hosts, k.perNode);
    CHECK(slice.slicePeriod == k.perNode);
    const int64_t numel = int64_t{3} * 5 * 7 * 64 * 1024;  // a multiple of 6, 8, 12, 16 chunks and of the segments
    const auto a = simulateSchedule(whole, net, numel, 4, k.segmentBytes);
    const auto b = simulateSchedule(slice, net, numel, 4, k.segmentBytes);
    CHECK(b.seconds == Approx(a.seconds).epsilon(1e-9));
    CHECK(b.latencyS == Approx(a.latencyS).epsilon(1e-9).margin(1e-12));
    CHECK(b.bytesSent == a.bytesSent);
    CHECK(b.nodeUp == a.nodeUp);
    CHECK(b.nodeDown == a.nodeDown);
    CHECK(b.messages == a.messages);
  }
  // A slice stands for the whole only on links of one rate, and only for whole nodes.
  Network uneven = oneRankPerNode(4, 1e8, 1e-4);
  uneven.nodeBytesPerSecond = {1e8, 1e8, 5e7, 1e8};
  const auto hosts = dtbench::comm::hostsFromRanksPerHost(4, 1);
  const auto ring = dtbench::comm::Topology::parse("ring");
  CHECK_THROWS_WITH(simulateSchedule(ring.slice(hosts, 1), uneven, 1024, 4, 0), Catch::Contains("links of one rate"));
  Network twoPerNode = oneRankPerNode(4, 1e8, 1e-4);
  twoPerNode.ranksPerNode = 2;
  CHECK_THROWS_WITH(simulateSchedule(ring.slice(hosts, 1), twoPerNode, 1024, 4, 0), Catch::Contains("whole nodes"));
  CHECK_FALSE(dtbench::comm::Topology::parse("tree").sliceable());
  CHECK_THROWS_AS(dtbench::comm::Topology::parse("star").slice(hosts, 1), std::invalid_argument);
}

TEST_CASE("A rank issues its messages one at a time: a clique pays the message overhead N - 1 times a step",
          "[predict][network]") {
  // A clique of N ranks, one per node: every rank posts N - 1 receives (a notice each, gloo keeps the
  // rendezvous) and N - 1 sends in each of its two steps, 4(N - 1) messages it issues, each o after
  // the one before: with no latency and links far faster than o, the last leaves no earlier than
  // (4(N - 1) - 1)·o, and nothing else takes time. Without the overhead the same clique is free.
  const double o = 1e-3;
  for (int n : {3, 4, 8}) {
    INFO(n << " ranks");
    Network net = oneRankPerNode(n, 1e15, 0);
    const auto clique = dtbench::comm::makeSchedule("clique", dtbench::comm::hostsFromRanksPerHost(n, 1));
    CHECK(simulateSchedule(clique, net, 1 << 12, 4, 0).seconds < 1e-9);
    net.inter.messageOverheadS = o;
    const double t = simulateSchedule(clique, net, 1 << 12, 4, 0).seconds;
    CHECK(t >= (4 * (n - 1) - 1) * o * (1 - 1e-12));
    CHECK(t <= 4 * (n - 1) * o * (1 + 1e-12));
  }
}

TEST_CASE("The message overhead leaves a ring alone while it is below the latency", "[predict][network]") {
  // A ring rank issues one notice and one send a step, and its send waits a latency for the
  // neighbour's notice: an overhead up to alpha never holds either back.
  const auto ring = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(4, 1));
  Network net = oneRankPerNode(4, 1e8, 1e-4);
  const double without = simulateSchedule(ring, net, 4 << 20, 4, 0).seconds;
  net.inter.messageOverheadS = 1e-4;
  CHECK(simulateSchedule(ring, net, 4 << 20, 4, 0).seconds == Approx(without).epsilon(1e-12));
  net.inter.messageOverheadS = -1e-6;
  CHECK_THROWS_WITH(simulateSchedule(ring, net, 10, 4, 0), Catch::Contains("message overhead"));
}
