#include "comm/peer_table.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
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

std::vector<int> PeerTable::goneLocalRanks(int self) const {
  std::vector<int> gone;
  const std::string host = thisHostName();
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r)
    if (r != self && peers_[r].host == host && peers_[r].pid > 0 && processGone(peers_[r].pid)) gone.push_back(r);
  return gone;
}

std::string PeerTable::describeGone(int self, std::chrono::milliseconds settle) const {
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
