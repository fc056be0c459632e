#include "comm/topology/hosts.h"

#include <map>
#include <stdexcept>
#include <utility>

namespace dtbench::comm {

std::vector<int> HostLayout::leaders() const {
  std::vector<int> result;
  for (const auto& ranks : hosts) result.push_back(ranks.front());
  return result;
}

int HostLayout::consecutiveHostSize() const {
  const int perHost = hosts.empty() ? 0 : static_cast<int>(hosts.front().size());
  for (int h = 0; h < static_cast<int>(hosts.size()); ++h) {
    if (static_cast<int>(hosts[h].size()) != perHost) return 0;
    for (int k = 0; k < perHost; ++k)
      if (hosts[h][k] != h * perHost + k) return 0;
  }
  return perHost;
}

HostLayout hostsFromNames(const std::vector<std::string>& hostnameOfRank) {
  HostLayout layout;
  std::map<std::string, int> index;
  for (int rank = 0; rank < static_cast<int>(hostnameOfRank.size()); ++rank) {
    auto [it, added] = index.emplace(hostnameOfRank[rank], static_cast<int>(layout.hosts.size()));
    if (added) layout.hosts.emplace_back();
    layout.hosts[it->second].push_back(rank);
    layout.hostOf.push_back(it->second);
  }
  return layout;
}

HostLayout hostsFromRanksPerHost(int worldSize, int ranksPerHost) {
  if (ranksPerHost < 1)
    throw std::invalid_argument("--ranks-per-host must be at least 1, got " + std::to_string(ranksPerHost));
  std::vector<std::string> names;
  for (int rank = 0; rank < worldSize; ++rank) names.push_back("host" + std::to_string(rank / ranksPerHost));
  return hostsFromNames(names);
}

}  // namespace dtbench::comm
