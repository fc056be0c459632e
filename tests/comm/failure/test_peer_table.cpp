// The peer table's endpoint map: which rank owns an address Gloo blames (connection, listener, host
// address; byte-swapped ports), the notes added to Gloo's messages (IPv4, IPv6, unknown addresses,
// several addresses, ambiguity), the exchange through a store, and describeGone's early answer when
// no rank shares this host.
#include "catch_torch.h"
#include "comm/failure/socket_endpoints.h"
#include "comm/store.h"
#include "comm/work.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/in_process_fixture.h"
#include "comm/failure/peer_table.h"

using namespace dtbench::comm;

namespace {

Endpoint ep(const std::string& text) {
  const auto endpoint = parseEndpoint(text);
  REQUIRE(endpoint);
  return *endpoint;
}

TcpSocket sock(const std::string& local, const std::string& remote) {
  TcpSocket socket;
  socket.local = ep(local);
  socket.remote = ep(remote);
  return socket;
}

// Three hosts, a Gloo full mesh as the kernel lists it (the shape of newer Gloo: one listener per
// rank): the lower rank of each pair accepted (its side has the listening port), the higher one
// connected from an ephemeral port. Rank 0's TCPStore server and the others' store clients are there.
std::vector<std::vector<TcpSocket>> meshSockets(const std::string& a, const std::string& b, const std::string& c) {
  return {
      {sock(a + ":29500", "0.0.0.0:0"), sock(a + ":5000", "0.0.0.0:0"), sock(a + ":5000", b + ":40001"),
       sock(a + ":5000", c + ":40002"), sock(a + ":29500", b + ":40100"), sock(a + ":29500", c + ":40200")},
      {sock(b + ":5001", "0.0.0.0:0"), sock(b + ":40001", a + ":5000"), sock(b + ":5001", c + ":40003"),
       sock(b + ":40100", a + ":29500")},
      {sock(c + ":5002", "0.0.0.0:0"), sock(c + ":40002", a + ":5000"), sock(c + ":40003", b + ":5001"),
       sock(c + ":40200", a + ":29500")},
  };
}

// Every rank's whole socket list (the addresses taken from it), as if every rank could see all.
PeerTable tableOf(const std::vector<std::string>& hosts, const std::vector<std::vector<TcpSocket>>& sockets) {
  std::vector<PeerInfo> peers;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    std::vector<std::string> addresses;
    for (const TcpSocket& socket : sockets[r])
      if (socket.local.address != "0.0.0.0" && socket.local.address != "::" &&
          std::find(addresses.begin(), addresses.end(), socket.local.address) == addresses.end())
        addresses.push_back(socket.local.address);
    peers.push_back({hosts[r], 1000 + static_cast<long>(r), sockets[r], addresses});
  }
  return PeerTable(peers);
}

}  // namespace

TEST_CASE("rankAt names the far end of one of this rank's connections or a rank's listener", "[peer_table]") {
  const PeerTable table = tableOf({"nodeA", "nodeB", "nodeC"}, meshSockets("10.1.0.1", "10.1.0.2", "10.1.0.3"));
  CHECK(table.rankAt(ep("10.1.0.3:40002"), 0) == 2);
  CHECK(table.rankAt(ep("10.1.0.2:40001"), 0) == 1);
  CHECK(table.rankAt(ep("10.1.0.1:5000"), 2) == 0);
  CHECK(table.rankAt(ep("10.1.0.3:40003"), 1) == 2);
  CHECK(table.rankAt(ep("10.1.0.1:29500"), 1) == 0);  // the store server's end
  // Rank 2's endpoint of its connection to rank 0 is no connection of rank 1's.
  CHECK(table.rankAt(ep("10.1.0.3:40002"), 1) == -1);
  // A listening socket names its rank; this rank's own endpoints and unknown addresses name nobody.
  CHECK(table.rankAt(ep("10.1.0.3:5002"), 0) == 2);
  CHECK(table.rankAt(ep("10.1.0.1:5000"), 0) == -1);
  CHECK(table.rankAt(ep("10.9.9.9:40002"), 0) == -1);
  CHECK(table.rankAt(ep("10.1.0.3:40002"), 7) == -1);
}

TEST_CASE("describeEndpoints adds the rank and host to Gloo's messages", "[peer_table]") {
  const PeerTable table = tableOf({"nodeA", "nodeB", "nodeC"}, meshSockets("10.1.0.1", "10.1.0.2", "10.1.0.3"));
  SECTION("closed by peer, IPv4") {
    CHECK(table.describeEndpoints(
              "[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.1.0.3]:40002", 0) ==
          " (the peer at [10.1.0.3]:40002 is rank 2 on host nodeC)");
  }
  SECTION("reset by peer, and the accepting side's view") {
    CHECK(table.describeEndpoints("Read error [10.1.0.1]:5000: Connection reset by peer", 2) ==
          " (the peer at [10.1.0.1]:5000 is rank 0 on host nodeA)");
  }
  SECTION("LibTorch 2.x: Gloo's own rank text stays, the host is added") {
    CHECK(table.describeEndpoints("Connection closed by peer rank 2 ([10.1.0.3]:40003). This is typically caused "
                                  "by a remote worker crashing.",
                                  1) == " (the peer at [10.1.0.3]:40003 is rank 2 on host nodeC)");
  }
  SECTION("an IPv4-mapped address in the message matches the IPv4 table") {
    CHECK(table.describeEndpoints("Connection closed by peer [::ffff:10.1.0.3]:40002", 0) ==
          " (the peer at [::ffff:10.1.0.3]:40002 is rank 2 on host nodeC)");
  }
  SECTION("unknown addresses are left as they are") {
    CHECK(table.describeEndpoints("Connection closed by peer [10.1.0.9]:40002", 0).empty());
    CHECK(table.describeEndpoints("Read timeout [10.1.0.9]:5002", 0).empty());
    CHECK(table.describeEndpoints("Timed out waiting 5000ms for recv operation to complete", 0).empty());
  }
  SECTION("several addresses: each known one once, in order; unknown ones skipped") {
    CHECK(table.describeEndpoints("Pair is not connected ([10.1.0.1]:5000$2 <--> [10.1.0.3]:40002); then "
                                  "[10.1.0.2]:40001 closed, [10.1.0.3]:40002 closed, 10.7.7.7:1 closed",
                                  0) ==
          " (the peer at [10.1.0.3]:40002 is rank 2 on host nodeC; the peer at [10.1.0.2]:40001 is rank 1 on host "
          "nodeB)");
  }
}

TEST_CASE("describeEndpoints reads the byte-swapped ports of LibTorch 1.13's Gloo", "[peer_table]") {
  // Gloo of LibTorch 1.13 writes port 40237 (0x9D2D) as 11677 (0x2D9D): a message from a real run.
  auto mesh = meshSockets("10.79.172.1", "10.79.172.2", "10.79.172.3");
  mesh[2].push_back(sock("10.79.172.3:40237", "10.79.172.1:5000"));
  mesh[0].push_back(sock("10.79.172.1:5000", "10.79.172.3:40237"));
  // Ranks 1 and 2 share a host name: only the ports can tell (no host-address rule).
  const PeerTable table = tableOf({"nodeA", "nodeC", "nodeC"}, mesh);
  CHECK(table.rankOf(ep("10.79.172.3:1"), 0) == -1);
  CHECK(table.describeEndpoints("[./gloo/transport/tcp/pair.cc:589] Read error [10.79.172.3]:11677: Connection "
                                "reset by peer",
                                0) == " (the peer at [10.79.172.3]:11677 is rank 2 on host nodeC)");
  // Port 40002 is 0x9C42; swapped 0x429C = 17052.
  CHECK(table.describeEndpoints("Connection closed by peer [10.79.172.3]:17052", 0) ==
        " (the peer at [10.79.172.3]:17052 is rank 2 on host nodeC)");

  SECTION("both readings belong to different ranks: no rank is named, only their host") {
    // Ranks 1 and 2 on one address, connected to rank 0 from ports 0x9D2D and 0x2D9D.
    const PeerTable shared = tableOf(
        {"nodeA", "nodeB", "nodeB"},
        {{sock("10.1.0.1:5000", "10.1.0.2:40237"), sock("10.1.0.1:5000", "10.1.0.2:11677")},
         {sock("10.1.0.2:40237", "10.1.0.1:5000")},
         {sock("10.1.0.2:11677", "10.1.0.1:5000")}});
    CHECK(shared.rankAt(ep("10.1.0.2:11677"), 0) == 2);
    CHECK(shared.rankAt(ep("10.1.0.2:40237"), 0) == 1);
    CHECK(shared.rankOf(ep("10.1.0.2:11677"), 0) == -1);
    CHECK(shared.rankOf(ep("10.1.0.2:40237"), 0) == -1);
    CHECK(shared.describeEndpoints("Connection closed by peer [10.1.0.2]:11677", 0) ==
          " (the peer at [10.1.0.2]:11677 is on host nodeB, which runs ranks 1, 2)");
  }
}

// LibTorch 1.13's Gloo: the accepting side may report the address its peer announced for the pair,
// whose listening socket was closed when the peer connected instead (a real run: rank 2 announced
// 10.80.2.3:36707, printed byte-swapped as 25487, then connected from 34706).
TEST_CASE("an announced address names the only rank on its host by its IP", "[peer_table]") {
  const std::vector<std::vector<TcpSocket>> sockets = {
      {sock("10.80.2.1:36001", "10.80.2.3:34706"), sock("10.80.2.1:39000", "10.80.2.2:56000"),
       sock("[::]:23457", "[::]:0"), sock("10.80.2.1:23457", "10.80.2.3:41232")},
      {sock("10.80.2.2:56000", "10.80.2.1:39000"), sock("10.80.2.2:38235", "10.80.2.3:56234"),
       sock("10.80.2.2:41000", "10.80.2.1:23457")},
      {sock("10.80.2.3:34706", "10.80.2.1:36001"), sock("10.80.2.3:56234", "10.80.2.2:38235"),
       sock("10.80.2.3:41232", "10.80.2.1:23457")}};
  const std::string message =
      "[./gloo/transport/tcp/pair.cc:589] Read error [10.80.2.3]:25487: Connection reset by peer";
  CHECK(tableOf({"h0", "h1", "h2"}, sockets).describeEndpoints(message, 0) ==
        " (the peer at [10.80.2.3]:25487 is rank 2 on host h2)");
  CHECK(tableOf({"h0", "h1", "h2"}, sockets).ranksAtAddress("10.80.2.3", 1) == std::vector<int>{2});
  // Another rank with rank 2's host name (whatever its address): the IP tells the host, not the rank.
  CHECK(tableOf({"h0", "h2", "h2"}, sockets).rankOf(ep("10.80.2.3:25487"), 0) == -1);
  CHECK(tableOf({"h0", "h2", "h2"}, sockets).describeEndpoints(message, 0) ==
        " (the peer at [10.80.2.3]:25487 is on host h2, which runs ranks 1, 2)");
  // Ranks of two hosts using the IP: neither rank nor host.
  auto shared = sockets;
  shared[1].push_back(sock("10.80.2.3:40000", "10.80.2.1:23457"));
  CHECK(tableOf({"h0", "h1", "h2"}, shared).describeEndpoints(message, 0).empty());
  // A rank that published nothing might be the one.
  auto missing = sockets;
  missing[1].clear();
  CHECK(tableOf({"h0", "h1", "h2"}, missing).describeEndpoints(message, 0).empty());
  // This rank's own address is nobody else's; a peer on this host is describeGone()'s.
  CHECK(tableOf({"h0", "h1", "h2"}, sockets).ranksAtAddress("10.80.2.1", 0).empty());
  CHECK(tableOf({"h0", "h1", "h0"}, sockets).ranksAtAddress("10.80.2.3", 0).empty());
}

TEST_CASE("describeEndpoints handles IPv6 and peers on this host", "[peer_table]") {
  const PeerTable table =
      tableOf({"nodeA", "nodeA", "nodeB"}, meshSockets("[2001:db8::1]", "[2001:db8::2]", "[2001:db8::3]"));
  CHECK(table.describeEndpoints("Read error [2001:db8::3]:40002: Connection reset by peer", 0) ==
        " (the peer at [2001:db8::3]:40002 is rank 2 on host nodeB)");
  CHECK(table.describeEndpoints("Connection closed by peer [2001:db8:0:0::2]:40001", 0) ==
        " (the peer at [2001:db8:0:0::2]:40001 is rank 1 on this host)");
}

TEST_CASE("the endpoint map never guesses between ranks", "[peer_table]") {
  SECTION("ranks sharing one process list the same sockets: nobody is named") {
    auto mesh = meshSockets("127.0.0.1", "127.0.0.1", "127.0.0.1");
    std::vector<TcpSocket> all;
    for (const auto& sockets : mesh) all.insert(all.end(), sockets.begin(), sockets.end());
    const PeerTable table = tableOf({"nodeA", "nodeA", "nodeA"}, {all, all, all});
    CHECK(table.rankAt(ep("127.0.0.1:40002"), 0) == -1);
    CHECK(table.describeEndpoints("Connection closed by peer [127.0.0.1]:40002", 0).empty());
  }
  SECTION("one local port reused by connect() on two ranks of one host: the connection decides") {
    // Ranks 1 and 2 share 10.1.0.2 and both connected from port 40001 (different destinations).
    const PeerTable table = tableOf(
        {"nodeA", "nodeB", "nodeB"},
        {{sock("10.1.0.1:5000", "10.1.0.2:40001")}, {sock("10.1.0.2:40001", "10.1.0.1:5000")},
         {sock("10.1.0.2:40001", "10.1.0.9:7000")}});
    CHECK(table.rankAt(ep("10.1.0.2:40001"), 0) == 1);
  }
  SECTION("this rank could not list its sockets: no connection can be paired") {
    auto mesh = meshSockets("10.1.0.1", "10.1.0.2", "10.1.0.3");
    mesh[0].clear();
    // The address still tells the host, and the rank when it is alone there.
    const std::string message = "Connection closed by peer [10.1.0.3]:40002";
    CHECK(tableOf({"nodeA", "nodeB", "nodeB"}, mesh).describeEndpoints(message, 0) ==
          " (the peer at [10.1.0.3]:40002 is on host nodeB, which runs ranks 1, 2)");
    CHECK(tableOf({"nodeA", "nodeB", "nodeC"}, mesh).rankOf(ep("10.1.0.3:40002"), 0) == 2);
  }
  SECTION("the peer could not list its sockets") {
    auto mesh = meshSockets("10.1.0.1", "10.1.0.2", "10.1.0.3");
    mesh[2].clear();
    const PeerTable table = tableOf({"nodeA", "nodeB", "nodeC"}, mesh);
    CHECK(table.rankAt(ep("10.1.0.3:40002"), 0) == -1);
    CHECK(table.rankOf(ep("10.1.0.3:40002"), 0) == -1);
    CHECK(table.rankAt(ep("10.1.0.2:40001"), 0) == 1);
  }
}

TEST_CASE("exchangeEndpoints carries what each rank needs of the others' sockets through the store",
          "[peer_table]") {
  const auto mesh = meshSockets("10.1.0.1", "[2001:db8::2]", "10.1.0.3");
  Store store = Store::hash(std::chrono::seconds(10));
  const auto tables = testing::runThreads<PeerTable>(3, [&](int rank) {
    PeerTable table = PeerTable::exchange(store, rank, 3);
    // Rank 1 could not read /proc: it publishes an empty list, and nobody waits for more.
    table.exchangeEndpoints(store, rank, rank == 1 ? std::vector<TcpSocket>{} : mesh[rank]);
    return table;
  });
  for (const PeerTable& table : tables) {
    REQUIRE(table.peers().size() == 3);
    CHECK(table.peers()[1].sockets.empty());
    CHECK(table.peers()[1].addresses.empty());
    CHECK(table.peers()[0].addresses == std::vector<std::string>{"10.1.0.1"});
    CHECK(table.peers()[2].addresses == std::vector<std::string>{"10.1.0.3"});
    CHECK(table.peers()[2].host == thisHostName());
  }
  // Each rank keeps its own list whole; of the others: listeners and connections to its addresses.
  CHECK(tables[0].peers()[0].sockets.size() == mesh[0].size());
  CHECK(tables[0].peers()[2].sockets.size() == 3);  // listener 5002, 40002 and 40200 to 10.1.0.1
  CHECK(tables[2].peers()[0].sockets.size() == 4);  // listeners 29500 and 5000, two connections to 10.1.0.3
  CHECK(tables[1].peers()[2].sockets.size() == 1);  // rank 1 has no address: listeners only
  CHECK(tables[0].rankAt(parseEndpoint("10.1.0.3:40002").value(), 0) == 2);
  CHECK(tables[2].rankAt(parseEndpoint("10.1.0.1:5000").value(), 2) == 0);
  CHECK(tables[0].rankAt(parseEndpoint("10.1.0.3:5002").value(), 0) == 2);  // a listener
  // Rank 2's connection to rank 1 is no business of rank 0's: not transferred.
  const auto& seenBy0 = tables[0].peers()[2].sockets;
  CHECK(std::none_of(seenBy0.begin(), seenBy0.end(),
                     [](const TcpSocket& socket) { return socket.local.str() == "10.1.0.3:40003"; }));
  CHECK(tables[0].rankAt(parseEndpoint("[2001:db8::2]:40001").value(), 0) == -1);  // rank 1 published nothing
}

TEST_CASE("describeGone answers at once when no other rank shares this host", "[peer_table]") {
  const PeerTable table({{thisHostName(), 1, {}, {}}, {"elsewhere-1", 2, {}, {}}, {"elsewhere-2", 3, {}, {}}});
  const auto start = std::chrono::steady_clock::now();
  CHECK(table.describeGone(0, std::chrono::milliseconds(2000)).empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
}
