#pragma once
// HostLayout: which ranks share a host, for the host-aware topologies (binary-tree-star,
// hierarchical). From the ranks' real hostnames, or emulated with --ranks-per-host K (ranks
// [0, K) on host 0, [K, 2K) on host 1, ...; when K does not divide the world the last host is
// smaller). Hosts are ordered by their lowest rank; a host's leader is its lowest rank.

#include <memory>
#include <string>
#include <vector>

namespace dtbench::comm {

struct HostLayout {
  std::vector<std::vector<int>> hosts;  // ranks of each host, ascending
  std::vector<int> hostOf;              // host index of each rank

  int worldSize() const { return static_cast<int>(hostOf.size()); }
  int leaderOf(int host) const { return hosts[host].front(); }
  std::vector<int> leaders() const;
  // K when every host holds K consecutive ranks (rank r on host r / K), else 0: the layouts over
  // which a sliceable Schedule repeats every host (Topology::slice).
  int consecutiveHostSize() const;
};

HostLayout hostsFromNames(const std::vector<std::string>& hostnameOfRank);
// Throws std::invalid_argument when ranksPerHost < 1.
HostLayout hostsFromRanksPerHost(int worldSize, int ranksPerHost);

}  // namespace dtbench::comm
