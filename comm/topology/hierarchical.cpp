#include "comm/topology/hierarchical.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/topology/ring.h"

namespace dtbench::comm {

Schedule hierarchicalSchedule(const HostLayout& hosts) {
  const std::vector<int> leaders = hosts.leaders();
  const int chunks = std::max(1, static_cast<int>(leaders.size()));
  Schedule schedule{"hierarchical", hosts.worldSize(), chunks, {}};
  Step gather, scatter;
  for (int h = 0; h < static_cast<int>(hosts.hosts.size()); ++h)
    for (int member : hosts.hosts[h]) {
      if (member == hosts.leaderOf(h)) continue;
      gather.transfers.push_back(Transfer{member, hosts.leaderOf(h), 0, chunks, true});
      scatter.transfers.push_back(Transfer{hosts.leaderOf(h), member, 0, chunks, false});
    }
  if (!gather.transfers.empty()) schedule.steps.push_back(std::move(gather));
  for (Step& step : ringSteps(leaders)) schedule.steps.push_back(std::move(step));
  if (!scatter.transfers.empty()) schedule.steps.push_back(std::move(scatter));
  return schedule;
}

}  // namespace dtbench::comm
