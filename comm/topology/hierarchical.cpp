#include "comm/topology/hierarchical.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "comm/topology/ring.h"

namespace dtbench::comm {

namespace {

// The Schedule, or with senders < world the transfers of ranks [0, senders) only.
Schedule hierarchical(const HostLayout& hosts, int senders) {
  const std::vector<int> leaders = hosts.leaders();
  const int chunks = std::max(1, static_cast<int>(leaders.size()));
  Schedule schedule{"hierarchical", hosts.worldSize(), chunks, {}};
  Step gather, scatter;
  for (int h = 0; h < static_cast<int>(hosts.hosts.size()); ++h)
    for (int member : hosts.hosts[h]) {
      if (member >= senders && hosts.leaderOf(h) >= senders) continue;
      if (member == hosts.leaderOf(h)) continue;
      if (member < senders) gather.transfers.push_back(Transfer{member, hosts.leaderOf(h), 0, chunks, true});
      if (hosts.leaderOf(h) < senders) scatter.transfers.push_back(Transfer{hosts.leaderOf(h), member, 0, chunks, false});
    }
  if (!gather.transfers.empty()) schedule.steps.push_back(std::move(gather));
  const int leadersSending = static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), senders) - leaders.begin());
  for (Step& step : ringSteps(leaders, leadersSending)) schedule.steps.push_back(std::move(step));
  if (!scatter.transfers.empty()) schedule.steps.push_back(std::move(scatter));
  return schedule;
}

}  // namespace

Schedule hierarchicalSchedule(const HostLayout& hosts) { return hierarchical(hosts, hosts.worldSize()); }

Schedule hierarchicalSlice(const HostLayout& hosts, int period) {
  const int world = hosts.worldSize();
  const int perHost = hosts.consecutiveHostSize();
  if (perHost == 0 || period < 1 || period % perHost != 0 || world % period != 0)
    throw std::invalid_argument("a hierarchical slice needs hosts of equal size holding consecutive ranks and a period (" +
                                std::to_string(period) + ") that is a multiple of the host size and divides the world (" +
                                std::to_string(world) + ")");
  Schedule schedule = hierarchical(hosts, period);
  schedule.slicePeriod = period;
  return schedule;
}

}  // namespace dtbench::comm
