#pragma once
// PeerTable: who every rank is (host name, process id and the TCP endpoints of its sockets),
// exchanged through the Store at start-up, so that a failure can be blamed on a rank even after the
// store's host is gone.
//
// Gloo reports a dead peer only by address, "Connection closed by peer [ip]:port" or "Read error
// [ip]:port: Connection reset by peer" (2.x adds Gloo's "rank N (...)"), or as a timeout. Two things
// turn that into ranks:
//   - describeEndpoints(): after the Gloo group connected its full mesh, every rank publishes what
//     it knows of its TCP sockets (exchangeEndpoints(), from socket_endpoints.h's ownTcpSockets()),
//     so an address in Gloo's message can be traced to the rank that owns it, on any host
//     (rankOf()):
//       1. connection: exactly one rank other than this one has a socket whose local end is the
//          address and whose remote end is a local end of this rank's sockets (the two ends of one
//          connection); else
//       2. listener: exactly one such rank listens on the address; else
//       3. host address (Note [Gloo's announced address] in the .cpp): every other rank published
//          its sockets, the ranks using the address's IP all have one host name, not this rank's,
//          and that host runs a single rank. When it runs several, the note names the host and
//          its ranks instead ("is on host nodeB, which runs ranks 2, 3").
//     Gloo of LibTorch 1.13 prints ports byte-swapped (Note [Gloo's port byte order]): 1 and 2 try
//     both readings and give up when they point at different ranks. Anything else (an address of
//     no rank or of several hosts, a table missing because /proc was unreadable) is left as it is:
//     the table never names a wrong rank. Connections made after the exchange (Gloo's lazy
//     initialisation, which dtbench does not ask for) are not in the table.
//   - describeGone(): peers on this host whose process no longer runs (or is a zombie).

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "comm/failure/socket_endpoints.h"
#include "comm/store.h"

namespace dtbench::comm {

struct PeerInfo {
  std::string host;
  long pid = 0;
  // Filled by exchangeEndpoints(); both empty before, or when the rank could not list its sockets.
  // For this rank all its sockets; for the others their listeners (remote port 0) and their
  // connections to this rank's addresses, which is all that rules 1 and 2 look at.
  std::vector<TcpSocket> sockets;
  std::vector<std::string> addresses;  // local addresses of all its sockets (canonical; no wildcard)
};

class PeerTable {
 public:
  PeerTable() = default;
  explicit PeerTable(std::vector<PeerInfo> peers) : peers_(std::move(peers)) {}
  // Publishes this rank's entry under "dtbench/peer/<rank>" and reads everyone's (blocking until
  // all ranks published, or the store's timeout).
  static PeerTable exchange(Store& store, int rank, int worldSize);
  // Publishes `own` (this rank's sockets; empty is fine) and reads every rank's into its PeerInfo,
  // blocking like exchange(). Call it on every rank after the Gloo group is constructed. Throws only
  // what the store throws. Keys, so that each rank reads a few small values per rank, not every
  // rank's every socket: "dtbench/endpoints/<rank>/to/<A>" = one "<local> <remote>" line
  // (Endpoint::str()) per socket connected to address A, for every such A, then
  // "dtbench/endpoints/<rank>" = "addresses A...\nlisteners E...\n". A reader waits for the latter
  // and then fetches the "to" keys of its own addresses that exist.
  void exchangeEndpoints(Store& store, int rank, const std::vector<TcpSocket>& own);

  const std::vector<PeerInfo>& peers() const { return peers_; }
  // Rules 1 and 2 above for exactly this endpoint: the rank, or -1 when none or more than one.
  int rankAt(const Endpoint& endpoint, int self) const;
  // Rule 3 above for an address (canonical, Endpoint::address): every rank of the one host, other
  // than self's, whose ranks use it (ascending); empty when there is no such single host.
  std::vector<int> ranksAtAddress(const std::string& address, int self) const;
  // The rank Gloo means by an endpoint it wrote (rules 1 to 3, both port readings), or -1.
  int rankOf(const Endpoint& written, int self) const;
  // For the endpoints written in `message` (findEndpoints) that rankOf() traces to a rank:
  // " (the peer at [10.1.0.3]:41822 is rank 2 on host nodeB; ...)", "on this host" when the rank
  // shares self's host name; for those only traced to a host of several ranks, "the peer at ... is
  // on host nodeB, which runs ranks 2, 3"; "" when none is traced. Each endpoint once, in the
  // order written.
  std::string describeEndpoints(const std::string& message, int self) const;
  // Ranks on this host, other than `self`, whose process is gone. Never blocks.
  std::vector<int> goneLocalRanks(int self) const;
  // " (rank 2 (pid 123 on this host) is no longer running)" or "" when no peer is known gone.
  // A killed process closes its sockets a moment before it shows as exited, so a failure seen
  // through a socket may come first: when no peer looks gone yet, this looks again for up to
  // `settle` before answering "" (only on the failure path, where the run ends anyway). Answers ""
  // at once when no other rank shares this host.
  std::string describeGone(int self, std::chrono::milliseconds settle = std::chrono::milliseconds(1000)) const;

 private:
  std::vector<PeerInfo> peers_;
};

std::string thisHostName();

}  // namespace dtbench::comm
