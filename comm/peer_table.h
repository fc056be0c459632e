#pragma once
// PeerTable: who every rank is (host name and process id), exchanged once through the Store at
// start-up, so that a failure can be blamed on a rank even after the store's host is gone.
//
// Gloo reports a dead peer only as "Connection reset/closed by peer [ip]:port" or as a timeout.
// describeFailure() adds the ranks that are known to be gone: peers on this host whose process no
// longer runs (or is a zombie). Peers on other hosts cannot be checked this way; their failure is
// reported with Gloo's own address text.

#include <chrono>
#include <string>
#include <vector>

#include "comm/store.h"

namespace dtbench::comm {

struct PeerInfo {
  std::string host;
  long pid = 0;
};

class PeerTable {
 public:
  PeerTable() = default;
  // Publishes this rank's entry under "dtbench/peer/<rank>" and reads everyone's (blocking until
  // all ranks published, or the store's timeout).
  static PeerTable exchange(Store& store, int rank, int worldSize);

  const std::vector<PeerInfo>& peers() const { return peers_; }
  // Ranks on this host, other than `self`, whose process is gone. Never blocks.
  std::vector<int> goneLocalRanks(int self) const;
  // " (rank 2 (pid 123 on this host) is no longer running)" or "" when no peer is known gone.
  // A killed process closes its sockets a moment before it shows as exited, so a failure seen
  // through a socket may come first: when no peer looks gone yet, this looks again for up to
  // `settle` before answering "" (only on the failure path, where the run ends anyway).
  std::string describeGone(int self, std::chrono::milliseconds settle = std::chrono::milliseconds(1000)) const;

 private:
  std::vector<PeerInfo> peers_;
};

std::string thisHostName();

}  // namespace dtbench::comm
