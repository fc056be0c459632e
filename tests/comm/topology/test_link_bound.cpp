// The link bound (comm/topology/link_bound.h), every number worked by hand from the Schedules'
// definitions (ring.h, tree.h, hierarchical.h). Unless a case says otherwise: 1200 float32 elements,
// S = 4800 bytes per rank, links of 1 Gbit/s, whose TCP payload rate is
//     P = 1e9 / 8 × 1448 / 1514 = 125,000,000 × 1448 / 1514 = 119,550,858.65 bytes/s,
// and busbw bytes = S × 2(N−1)/N (7200 for N = 4, 6400 for N = 3).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/link_bound.h"
#include "comm/topology/native_models.h"
#include "comm/topology/registry.h"

using namespace dtbench::comm;

namespace {

constexpr double kGbit = 1e9;
constexpr double kPayload = 119550858.65257595;  // P above
constexpr int64_t kNumel = 1200;
constexpr int64_t kFloat = 4;

std::vector<double> gigabit(size_t hosts) { return std::vector<double>(hosts, kGbit); }

}  // namespace

TEST_CASE("a link's payload rate is its bit rate in full TCP frames", "[link_bound]") {
  CHECK(linkPayloadRate(kGbit) == Approx(kPayload).epsilon(1e-12));
  // 100 Mbit/s: 12,500,000 × 1448 / 1514 = 11,955,085.87 bytes/s.
  CHECK(linkPayloadRate(1e8) == Approx(11955085.865257597).epsilon(1e-12));
}

TEST_CASE("ring, one rank per host: one busbw byte per link byte, the bound is the payload rate", "[link_bound]") {
  // N = 4: every rank sends 2(N−1)/N · S = 1.5 × 4800 = 7200 bytes to its successor, all of them
  // to another host, and receives 7200 from its predecessor.
  const HostLayout hosts = hostsFromRanksPerHost(4, 1);
  const HostLinkBytes bytes = hostLinkBytes(makeSchedule("ring", hosts), hosts, kNumel, kFloat);
  CHECK(bytes.up == std::vector<int64_t>{7200, 7200, 7200, 7200});
  CHECK(bytes.down == std::vector<int64_t>{7200, 7200, 7200, 7200});
  const LinkBound bound = topologyLinkBound("ring", Backend::kGloo, hosts, kNumel, kFloat, gigabit(4));
  CHECK(bound.minSeconds == Approx(7200 / kPayload));
  CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(1.0));  // 7200 / 7200
  CHECK(bound.busbwBytesPerSecond == Approx(kPayload));      // 7200 / (7200 / P)
  CHECK(bound.busiestHost == 0);                             // every link ties: the lowest host, up first
  CHECK(bound.busiestUp);
}

TEST_CASE("ring over 2 hosts of 2 ranks: only the edges 1->2 and 3->0 cross", "[link_bound]") {
  // Ranks 0, 1 on host 0 and 2, 3 on host 1. Each ring edge carries 7200 bytes (above); 0->1 and
  // 2->3 stay inside a host. Host 0 sends 1->2 (7200) and receives 3->0 (7200); host 1 sends 3->0
  // and receives 1->2. Busiest link: 7200 bytes, as with one rank per host: ratio 1, bound P.
  const HostLayout hosts = hostsFromRanksPerHost(4, 2);
  const HostLinkBytes bytes = hostLinkBytes(makeSchedule("ring", hosts), hosts, kNumel, kFloat);
  CHECK(bytes.up == std::vector<int64_t>{7200, 7200});
  CHECK(bytes.down == std::vector<int64_t>{7200, 7200});
  const LinkBound bound = topologyLinkBound("ring", Backend::kGloo, hosts, kNumel, kFloat, gigabit(2));
  CHECK(bound.minSeconds == Approx(7200 / kPayload));
  CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(1.0));
  CHECK(bound.busbwBytesPerSecond == Approx(kPayload));
}

TEST_CASE("star: the hub's link carries N/2 bytes per busbw byte", "[link_bound]") {
  SECTION("N = 3") {
    // The hub (rank 0) receives S from each of 2 leaves and sends S back to each: 9600 each way;
    // a leaf sends and receives 4800. busbw bytes 4800 × 4/3 = 6400; ratio 9600 / 6400 = 1.5;
    // bound = 6400 / (9600 / P) = 2/3 P.
    const HostLayout hosts = hostsFromRanksPerHost(3, 1);
    const HostLinkBytes bytes = hostLinkBytes(makeSchedule("star", hosts), hosts, kNumel, kFloat);
    CHECK(bytes.up == std::vector<int64_t>{9600, 4800, 4800});
    CHECK(bytes.down == std::vector<int64_t>{9600, 4800, 4800});
    const LinkBound bound = topologyLinkBound("star", Backend::kGloo, hosts, kNumel, kFloat, gigabit(3));
    CHECK(bound.minSeconds == Approx(9600 / kPayload));
    CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(1.5));
    CHECK(bound.busbwBytesPerSecond == Approx(kPayload * 2 / 3));
    CHECK(bound.busiestHost == 0);
  }
  SECTION("N = 4") {
    // Hub: 3 × 4800 = 14400 each way; busbw bytes 7200; ratio 2; bound P / 2.
    const HostLayout hosts = hostsFromRanksPerHost(4, 1);
    const HostLinkBytes bytes = hostLinkBytes(makeSchedule("star", hosts), hosts, kNumel, kFloat);
    CHECK(bytes.up == std::vector<int64_t>{14400, 4800, 4800, 4800});
    CHECK(bytes.down == std::vector<int64_t>{14400, 4800, 4800, 4800});
    const LinkBound bound = topologyLinkBound("star", Backend::kGloo, hosts, kNumel, kFloat, gigabit(4));
    CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(2.0));
    CHECK(bound.busbwBytesPerSecond == Approx(kPayload / 2));
    CHECK(bound.busiestHost == 0);
  }
}

TEST_CASE("binary tree of 4 ranks: rank 0 and rank 1 each move two tensors per direction", "[link_bound]") {
  // parent(1) = parent(2) = 0, parent(3) = 1; whole tensors (4800) up the tree, then down.
  // Host 0 sends 0->1, 0->2 and receives 1->0, 2->0: 9600 each way. Host 1 sends 1->0 and 1->3,
  // receives 3->1 and 0->1: 9600 each way. Hosts 2 and 3: 4800 each way. Busiest 9600 (host 0 up
  // first among the ties); ratio 9600 / 7200 = 4/3; bound = 7200 / (9600 / P) = 3/4 P.
  const HostLayout hosts = hostsFromRanksPerHost(4, 1);
  const HostLinkBytes bytes = hostLinkBytes(makeSchedule("tree", hosts), hosts, kNumel, kFloat);
  CHECK(bytes.up == std::vector<int64_t>{9600, 9600, 4800, 4800});
  CHECK(bytes.down == std::vector<int64_t>{9600, 9600, 4800, 4800});
  const LinkBound bound = topologyLinkBound("tree", Backend::kGloo, hosts, kNumel, kFloat, gigabit(4));
  CHECK(bound.minSeconds == Approx(9600 / kPayload));
  CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(4.0 / 3));
  CHECK(bound.busbwBytesPerSecond == Approx(kPayload * 3 / 4));
  CHECK(bound.busiestHost == 0);
  CHECK(bound.busiestUp);
}

TEST_CASE("hierarchical over 2 hosts of 2: only the leaders' ring crosses", "[link_bound]") {
  // Hosts {0, 1} and {2, 3}, leaders 0 and 2, the tensor in 2 chunks of 600 elements (2400 bytes).
  // 1->0 and 3->2 (reduce) and 0->1, 2->3 (broadcast) stay inside the hosts. Across: 0->2 chunk a
  // (reduce) then chunk b (copy) = 4800; 2->0 chunk b then chunk a = 4800. busbw bytes 7200; ratio
  // 4800 / 7200 = 2/3; bound = 7200 / (4800 / P) = 1.5 P: above the link, because the hosts'
  // own reduction halves what must cross.
  const HostLayout hosts = hostsFromRanksPerHost(4, 2);
  const HostLinkBytes bytes = hostLinkBytes(makeSchedule("hierarchical", hosts), hosts, kNumel, kFloat);
  CHECK(bytes.up == std::vector<int64_t>{4800, 4800});
  CHECK(bytes.down == std::vector<int64_t>{4800, 4800});
  const LinkBound bound = topologyLinkBound("hierarchical", Backend::kGloo, hosts, kNumel, kFloat, gigabit(2));
  CHECK(bound.minSeconds == Approx(4800 / kPayload));
  CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(2.0 / 3));
  CHECK(bound.busbwBytesPerSecond == Approx(kPayload * 1.5));
}

TEST_CASE("native is held to its backend's model: gloo's and nccl's ring, mpi's ring over the hosts",
          "[link_bound]") {
  for (const Backend backend : {Backend::kGloo, Backend::kMpi, Backend::kNccl}) CHECK(nativeModel(backend).efficiency == 1.0);
  // One rank per host: every model is the ring over the hosts.
  for (const Backend backend : {Backend::kGloo, Backend::kMpi, Backend::kNccl}) {
    const HostLayout hosts = hostsFromRanksPerHost(3, 1);
    const LinkBound native = topologyLinkBound("native", backend, hosts, kNumel, kFloat, gigabit(3));
    const LinkBound ring = topologyLinkBound("ring", backend, hosts, kNumel, kFloat, gigabit(3));
    CHECK(native.minSeconds == ring.minSeconds);
    CHECK(native.busbwBytesPerSecond == ring.busbwBytesPerSecond);
  }
  // 2 hosts x 2 ranks: a ring over the ranks (gloo, nccl) crosses each link with 1.5 S; mpi's
  // reduce-scatter + all-gather is modelled as the hosts' ring, S: its bound is 1.5 times the ring's.
  {
    const HostLayout hosts = hostsFromRanksPerHost(4, 2);
    const LinkBound gloo = topologyLinkBound("native", Backend::kGloo, hosts, kNumel, kFloat, gigabit(2));
    const LinkBound mpi = topologyLinkBound("native", Backend::kMpi, hosts, kNumel, kFloat, gigabit(2));
    const LinkBound ring = topologyLinkBound("ring", Backend::kGloo, hosts, kNumel, kFloat, gigabit(2));
    CHECK(gloo.busbwBytesPerSecond == ring.busbwBytesPerSecond);
    CHECK(mpi.busbwBytesPerSecond == Approx(1.5 * ring.busbwBytesPerSecond));
    CHECK(mpi.busiestLinkBytesPerBusbwByte == Approx(2.0 / 3));
  }
  // mpi: the hosts' ring on a power-of-two world, the ring over the ranks (libnbc's ring) otherwise.
  for (const HostLayout& hosts : {hostsFromRanksPerHost(4, 2), hostsFromRanksPerHost(8, 4), hostsFromRanksPerHost(6, 2)}) {
    const std::vector<double> rates = gigabit(hosts.hosts.size());
    const bool powerOfTwo = (hosts.worldSize() & (hosts.worldSize() - 1)) == 0;
    const LinkBound native = topologyLinkBound("native", Backend::kMpi, hosts, kNumel, kFloat, rates);
    const LinkBound model =
        topologyLinkBound(powerOfTwo ? "hierarchical" : "ring", Backend::kMpi, hosts, kNumel, kFloat, rates);
    CHECK(native.minSeconds > 0);
    CHECK(native.minSeconds == model.minSeconds);
    CHECK(native.busiestLinkBytesPerBusbwByte == model.busiestLinkBytesPerBusbwByte);
    CHECK(native.busiestHost == model.busiestHost);
  }
}

TEST_CASE("on one host no byte crosses a link: no bound", "[link_bound]") {
  const HostLayout hosts = hostsFromRanksPerHost(4, 4);
  for (const std::string& topology : topologyNames()) {
    INFO(topology);
    const LinkBound bound = topologyLinkBound(topology, Backend::kGloo, hosts, kNumel, kFloat, {kGbit});
    CHECK(bound.minSeconds == 0);
    CHECK(bound.busbwBytesPerSecond == 0);
    CHECK(bound.busiestLinkBytesPerBusbwByte == 0);
    CHECK(bound.busiestHost == -1);
  }
  const HostLinkBytes bytes = hostLinkBytes(makeSchedule("ring", hosts), hosts, kNumel, kFloat);
  CHECK(bytes.up == std::vector<int64_t>{0});
  CHECK(bytes.down == std::vector<int64_t>{0});
}

TEST_CASE("the slowest link sets the bound", "[link_bound]") {
  SECTION("ring, equal bytes: the slow host") {
    // N = 3, one rank per host: every link carries 2 × 2/3 × 4800 = 6400 bytes each way. Host 1's
    // link runs at 100 Mbit/s (P / 10): t_min = 6400 / (P / 10); busbw bytes 6400, bound P / 10.
    const HostLayout hosts = hostsFromRanksPerHost(3, 1);
    const LinkBound bound = topologyLinkBound("ring", Backend::kGloo, hosts, kNumel, kFloat, {kGbit, 1e8, kGbit});
    CHECK(bound.minSeconds == Approx(6400 / (kPayload / 10)));
    CHECK(bound.busbwBytesPerSecond == Approx(kPayload / 10));
    CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(1.0));
    CHECK(bound.busiestHost == 1);
    CHECK(bound.busiestUp);
  }
  SECTION("star: a slow leaf outweighs the hub's bytes") {
    // N = 3: the hub moves 9600 bytes at P (9600 / P s), leaf 1 moves 4800 at P / 10 (48000 / P s):
    // the leaf sets t_min. bound = 6400 / (48000 / P) = 2/15 P; ratio = 4800 / 6400 = 0.75.
    const HostLayout hosts = hostsFromRanksPerHost(3, 1);
    const LinkBound bound = topologyLinkBound("star", Backend::kGloo, hosts, kNumel, kFloat, {kGbit, 1e8, kGbit});
    CHECK(bound.minSeconds == Approx(48000 / kPayload));
    CHECK(bound.busbwBytesPerSecond == Approx(kPayload * 2 / 15));
    CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(0.75));
    CHECK(bound.busiestHost == 1);
  }
}

TEST_CASE("chunk rounding is counted exactly in bytes", "[link_bound]") {
  // Ring over 3 hosts, 10 float32 elements in 3 chunks: [0, 3), [3, 6), [6, 10) = 3, 3, 4 elements.
  // Position i sends every chunk but i+1 in the reduce-scatter and every chunk but i+2 in the
  // all-gather (mod 3): rank 0 sends chunks 0, 2 then 1, 0 = 3+4+3+3 = 13 elements = 52 bytes,
  // rank 1 chunks 1, 0 then 2, 1 = 3+3+4+3 = 13 = 52 bytes, rank 2 chunks 2, 1 then 0, 2 =
  // 4+3+3+4 = 14 = 56 bytes. Rank 0 receives what rank 2 sends: down = {56, 52, 52}.
  // Busiest: host 0's down (56; host 2's up ties later). busbw bytes = 40 × 4/3 = 160/3; ratio
  // 56 / (160/3) = 1.05; bound = (160/3) / (56 / P) = 20/21 P.
  const HostLayout hosts = hostsFromRanksPerHost(3, 1);
  const HostLinkBytes bytes = hostLinkBytes(makeSchedule("ring", hosts), hosts, 10, kFloat);
  CHECK(bytes.up == std::vector<int64_t>{52, 52, 56});
  CHECK(bytes.down == std::vector<int64_t>{56, 52, 52});
  const LinkBound bound = topologyLinkBound("ring", Backend::kGloo, hosts, 10, kFloat, gigabit(3));
  CHECK(bound.minSeconds == Approx(56 / kPayload));
  CHECK(bound.busiestLinkBytesPerBusbwByte == Approx(1.05));
  CHECK(bound.busbwBytesPerSecond == Approx(kPayload * 20 / 21));
  CHECK(bound.busiestHost == 0);
  CHECK_FALSE(bound.busiestUp);
}

TEST_CASE("rates that do not cover the hosts, or are not positive, are refused", "[link_bound]") {
  const HostLayout hosts = hostsFromRanksPerHost(3, 1);
  const Schedule ring = makeSchedule("ring", hosts);
  CHECK_THROWS_WITH(linkBound(ring, hosts, kNumel, kFloat, {kGbit, kGbit}),
                    Catch::Contains("2 host(s)") && Catch::Contains("has 3"));
  CHECK_THROWS_AS(linkBound(ring, hosts, kNumel, kFloat, gigabit(4)), std::invalid_argument);
  CHECK_THROWS_WITH(linkBound(ring, hosts, kNumel, kFloat, {kGbit, 0, kGbit}), Catch::Contains("host 1"));
  CHECK_THROWS_AS(linkBound(ring, hosts, kNumel, kFloat, {kGbit, kGbit, -1e9}), std::invalid_argument);
  CHECK_THROWS_AS(linkBound(ring, hosts, kNumel, kFloat, {kGbit, std::nan(""), kGbit}), std::invalid_argument);
  CHECK_THROWS_AS(linkBound(ring, hosts, kNumel, kFloat, {kGbit, std::numeric_limits<double>::infinity(), kGbit}),
                  std::invalid_argument);
  // A layout of another world size than the Schedule's.
  CHECK_THROWS_WITH(hostLinkBytes(ring, hostsFromRanksPerHost(4, 1), kNumel, kFloat),
                    Catch::Contains("4 ranks") && Catch::Contains("schedule 3"));
}
