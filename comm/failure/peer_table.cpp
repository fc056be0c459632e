#include "comm/failure/peer_table.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace dtbench::comm {
namespace {

bool processGone(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');  // "pid (comm) S ..."
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

}  // namespace

std::string thisHostName() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  return host;
}

PeerTable PeerTable::exchange(Store& store, int rank, int worldSize) {
  store.set("dtbench/peer/" + std::to_string(rank), thisHostName() + " " + std::to_string(::getpid()));
  PeerTable table;
  for (int r = 0; r < worldSize; ++r) {
    std::istringstream entry(store.get("dtbench/peer/" + std::to_string(r)));
    PeerInfo info;
    entry >> info.host >> info.pid;
    table.peers_.push_back(info);
  }
  return table;
}

void PeerTable::exchangeEndpoints(Store& store, int rank, const std::vector<TcpSocket>& own) {
  const std::string key = "dtbench/endpoints/";
  std::set<std::string> addresses;
  std::string listeners;
  std::map<std::string, std::string> byRemote;  // remote address -> "<local> <remote>" lines
  for (const TcpSocket& socket : own) {
    if (socket.local.address != "0.0.0.0" && socket.local.address != "::") addresses.insert(socket.local.address);
    if (socket.remote.port == 0)
      listeners += " " + socket.local.str();
    else
      byRemote[socket.remote.address] += socket.local.str() + " " + socket.remote.str() + "\n";
  }
  // The "to" keys first: a reader that sees the summary finds every one of them.
  for (const auto& [address, lines] : byRemote) store.set(key + std::to_string(rank) + "/to/" + address, lines);
  std::string summary = "addresses";
  for (const std::string& address : addresses) summary += " " + address;
  store.set(key + std::to_string(rank), summary + "\nlisteners" + listeners + "\n");

  const auto parseSockets = [](const std::string& text, std::vector<TcpSocket>& into) {
    std::istringstream lines(text);
    std::string local, remote;
    while (lines >> local >> remote) {
      const auto localEndpoint = parseEndpoint(local);
      const auto remoteEndpoint = parseEndpoint(remote);
      if (localEndpoint && remoteEndpoint) into.push_back({*localEndpoint, *remoteEndpoint});
    }
  };
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    PeerInfo& peer = peers_[r];
    peer.addresses.clear();
    peer.sockets.clear();
    if (r == rank) {
      peer.addresses.assign(addresses.begin(), addresses.end());
      peer.sockets = own;
      continue;
    }
    std::istringstream lines(store.get(key + std::to_string(r)));
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string what, word;
      words >> what;
      while (words >> word) {
        if (what == "addresses") {
          peer.addresses.push_back(word);
        } else if (what == "listeners") {
          if (const auto endpoint = parseEndpoint(word)) peer.sockets.push_back({*endpoint, Endpoint{"0.0.0.0", 0}});
        }
      }
    }
    for (const std::string& address : addresses) {
      const std::string to = key + std::to_string(r) + "/to/" + address;
      if (store.c10dStore()->check({to})) parseSockets(store.get(to), peer.sockets);
    }
  }
}

int PeerTable::rankAt(const Endpoint& endpoint, int self) const {
  if (self < 0 || self >= static_cast<int>(peers_.size())) return -1;
  const std::vector<TcpSocket>& mine = peers_[self].sockets;
  const auto isMine = [&](const Endpoint& e) {
    // Port 0: a listening socket's remote end, or a socket not bound yet; no connection's end.
    return e.port != 0 && std::any_of(mine.begin(), mine.end(), [&](const TcpSocket& s) { return s.local == e; });
  };
  // The one rank r != self with a socket matching `match`, or -1 for none or several.
  const auto onlyRank = [&](const auto& match) {
    int owner = -1;
    for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
      if (r == self || !std::any_of(peers_[r].sockets.begin(), peers_[r].sockets.end(), match)) continue;
      if (owner >= 0) return -1;  // e.g. ranks sharing one process list the same sockets
      owner = r;
    }
    return owner;
  };
  const int connected = onlyRank([&](const TcpSocket& s) { return s.local == endpoint && isMine(s.remote); });
  if (connected >= 0) return connected;
  return onlyRank([&](const TcpSocket& s) { return s.local == endpoint && s.remote.port == 0; });
}

std::vector<int> PeerTable::ranksAtAddress(const std::string& address, int self) const {
  if (self < 0 || self >= static_cast<int>(peers_.size())) return {};
  const std::string* host = nullptr;
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    if (r == self) continue;
    const auto& used = peers_[r].addresses;
    if (used.empty()) return {};  // a rank that could not list its sockets may use the address too
    if (std::find(used.begin(), used.end(), address) == used.end()) continue;
    if (host && *host != peers_[r].host) return {};  // ranks of two hosts use it
    host = &peers_[r].host;
  }
  if (!host || *host == peers_[self].host) return {};
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r)
    if (peers_[r].host == *host) ranks.push_back(r);
  return ranks;
}

// Note [Gloo's port byte order]
// Older Gloo (Debian's snapshot of 2022-05, the one LibTorch 1.13 uses, among them) prints an
// address's sin_port as it lies in memory, in network byte order: on a little-endian host port 40237
// (0x9D2D) reads 11677 (0x2D9D). Newer Gloo converts it first. Which one a LibTorch 2.x carries is
// not visible from here, so the port is tried as written and byte-swapped.
//
// Note [Gloo's announced address]
// In that older Gloo every pair listens on a port of its own and announces it through the store; the
// side with the lower address accepts, the other connects and closes its listening socket. The
// accepting side learns the real remote end from the accepted socket, but when its peer connected
// before it got to that pair, it then overwrites it with the announced address, whose socket is long
// closed and in no table. Only the address part then tells the host: ranksAtAddress().
int PeerTable::rankOf(const Endpoint& written, int self) const {
  Endpoint swapped = written;
  swapped.port = static_cast<uint16_t>(((written.port & 0xFFu) << 8) | (written.port >> 8));
  const int asWritten = rankAt(written, self);
  const int asSwapped = swapped.port == written.port ? asWritten : rankAt(swapped, self);
  if ((asWritten >= 0) != (asSwapped >= 0) || (asWritten >= 0 && asWritten == asSwapped))
    return std::max(asWritten, asSwapped);
  const std::vector<int> host = ranksAtAddress(written.address, self);
  return host.size() == 1 ? host.front() : -1;
}

std::string PeerTable::describeEndpoints(const std::string& message, int self) const {
  if (self < 0 || self >= static_cast<int>(peers_.size())) return "";
  std::vector<Endpoint> seen;
  std::string text;
  for (const EndpointMention& mention : findEndpoints(message)) {
    if (std::find(seen.begin(), seen.end(), mention.endpoint) != seen.end()) continue;
    seen.push_back(mention.endpoint);
    const int r = rankOf(mention.endpoint, self);
    std::string note;
    if (r >= 0) {
      note = "is rank " + std::to_string(r) +
             (peers_[r].host == peers_[self].host ? " on this host" : " on host " + peers_[r].host);
    } else if (const std::vector<int> host = ranksAtAddress(mention.endpoint.address, self); host.size() > 1) {
      note = "is on host " + peers_[host.front()].host + ", which runs ranks ";
      for (std::size_t i = 0; i < host.size(); ++i) note += (i == 0 ? "" : ", ") + std::to_string(host[i]);
    }
    if (!note.empty()) text += (text.empty() ? "" : "; ") + std::string("the peer at ") + mention.text + " " + note;
  }
  return text.empty() ? "" : " (" + text + ")";
}

std::vector<int> PeerTable::goneLocalRanks(int self) const {
  std::vector<int> gone;
  const std::string host = thisHostName();
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r)
    if (r != self && peers_[r].host == host && peers_[r].pid > 0 && processGone(peers_[r].pid)) gone.push_back(r);
  return gone;
}

std::string PeerTable::describeGone(int self, std::chrono::milliseconds settle) const {
  const std::string host = thisHostName();
  bool neighbours = false;
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r)
    neighbours = neighbours || (r != self && peers_[r].host == host);
  if (!neighbours) return "";
  const auto until = std::chrono::steady_clock::now() + settle;
  std::vector<int> gone = goneLocalRanks(self);
  while (gone.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gone = goneLocalRanks(self);
  }
  std::string text;
  for (int r : gone)
    text += (text.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + " (pid " +
            std::to_string(peers_[r].pid) + " on this host) is no longer running";
  return text.empty() ? "" : " (" + text + ")";
}

}  // namespace dtbench::comm
