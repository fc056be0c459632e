#include "experiments/report/runs/placement.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace dtbench::report {

std::vector<std::string> hostNames(const RunData& run) { return run.facts.world ? run.facts.world->hosts : std::vector<std::string>{}; }

Placement placementOf(const RunData& run) {
  Placement placement;
  const int world = run.worldSize();
  const std::vector<std::string> names = hostNames(run);
  if (world >= 1 && names.size() == static_cast<size_t>(world)) {
    std::map<std::string, size_t> nodeOf;  // name -> index, in the order of each node's lowest rank
    for (const std::string& name : names) {
      const auto [it, added] = nodeOf.emplace(name, placement.ranksPerNode.size());
      if (added) placement.ranksPerNode.push_back(0);
      ++placement.ranksPerNode[it->second];
    }
    placement.nodes = static_cast<int>(placement.ranksPerNode.size());
  } else if (world == 1) {
    placement.nodes = 1;
    placement.ranksPerNode = {1};
  }
  const int perHost = run.settings.comm.ranksPerHost;
  if (run.facts.world && run.facts.world->hostsEmulated && perHost > 0 && world > 0) {
    placement.ranksPerEmulatedHost = perHost;
    placement.emulatedHosts = (world + perHost - 1) / perHost;
  }
  return placement;
}

std::string Placement::text() const {
  auto ranks = [](int count) { return std::to_string(count) + (count == 1 ? " rank" : " ranks"); };
  std::string text;
  if (nodes > 1) {
    const auto [least, most] = std::minmax_element(ranksPerNode.begin(), ranksPerNode.end());
    text = std::to_string(nodes) + " nodes × " +
           (*least == *most ? ranks(*least) : std::to_string(*least) + "–" + ranks(*most));
  }
  if (emulatedHosts > 1) {
    const int world = std::accumulate(ranksPerNode.begin(), ranksPerNode.end(), 0);
    const int last = world - (emulatedHosts - 1) * ranksPerEmulatedHost;  // the last host may be smaller
    text += (text.empty() ? "" : ", ") + std::to_string(emulatedHosts) + " emulated hosts × " +
            (last > 0 && last < ranksPerEmulatedHost ? std::to_string(last) + "–" + ranks(ranksPerEmulatedHost)
                                                     : ranks(ranksPerEmulatedHost));
  }
  return text;
}

}  // namespace dtbench::report
