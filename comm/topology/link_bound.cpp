#include "comm/topology/link_bound.h"

#include "comm/topology/native_models.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "comm/topology/registry.h"
#include "comm/topology/ring.h"

namespace dtbench::comm {
namespace {

// TCP payload carried by one full Ethernet frame, and the frame's bytes as tbf counts them.
constexpr double kPayloadBytesPerFrame = 1448;
constexpr double kFrameBytes = 1514;

}  // namespace

double linkPayloadRate(double bitsPerSecond) { return bitsPerSecond / 8 * kPayloadBytesPerFrame / kFrameBytes; }

HostLinkBytes hostLinkBytes(const Schedule& schedule, const HostLayout& hosts, int64_t numel, int64_t elementBytes) {
  if (hosts.worldSize() != schedule.worldSize)
    throw std::invalid_argument("the host layout has " + std::to_string(hosts.worldSize()) + " ranks, the schedule " +
                                std::to_string(schedule.worldSize));
  if (numel < 0 || elementBytes < 1)
    throw std::invalid_argument("an all-reduce needs numel >= 0 and elementBytes >= 1, got " + std::to_string(numel) +
                                " and " + std::to_string(elementBytes));
  const std::vector<std::vector<int64_t>> traffic = scheduleTraffic(schedule, numel, elementBytes);
  HostLinkBytes bytes{std::vector<int64_t>(hosts.hosts.size(), 0), std::vector<int64_t>(hosts.hosts.size(), 0)};
  for (int src = 0; src < schedule.worldSize; ++src)
    for (int dst = 0; dst < schedule.worldSize; ++dst) {
      const int from = hosts.hostOf[src], to = hosts.hostOf[dst];
      if (from == to) continue;  // never touches the link
      bytes.up[from] += traffic[src][dst];
      bytes.down[to] += traffic[src][dst];
    }
  return bytes;
}

LinkBound linkBound(const Schedule& schedule, const HostLayout& hosts, int64_t numel, int64_t elementBytes,
                    const std::vector<double>& linkBitsPerSecond) {
  if (linkBitsPerSecond.size() != hosts.hosts.size())
    throw std::invalid_argument("link rates for " + std::to_string(linkBitsPerSecond.size()) +
                                " host(s), but the run has " + std::to_string(hosts.hosts.size()) +
                                ": one rate per host is needed");
  for (size_t h = 0; h < linkBitsPerSecond.size(); ++h)
    if (!(linkBitsPerSecond[h] > 0) || !std::isfinite(linkBitsPerSecond[h]))
      throw std::invalid_argument("host " + std::to_string(h) +
                                  "'s link rate must be a positive number of bit/s, got " +
                                  std::to_string(linkBitsPerSecond[h]));
  const HostLinkBytes bytes = hostLinkBytes(schedule, hosts, numel, elementBytes);
  LinkBound bound;
  int64_t busiestBytes = 0;
  // Hosts in order, up before down; a later link takes over only when strictly slower to drain.
  for (size_t h = 0; h < hosts.hosts.size(); ++h)
    for (const bool up : {true, false}) {
      const int64_t linkBytes = up ? bytes.up[h] : bytes.down[h];
      const double seconds = static_cast<double>(linkBytes) / linkPayloadRate(linkBitsPerSecond[h]);
      if (linkBytes > 0 && seconds > bound.minSeconds) {
        bound.minSeconds = seconds;
        bound.busiestHost = static_cast<int>(h);
        bound.busiestUp = up;
        busiestBytes = linkBytes;
      }
    }
  const int n = schedule.worldSize;
  const double busbwBytes = static_cast<double>(numel) * static_cast<double>(elementBytes) * ringBusFactor(n);
  if (bound.minSeconds > 0 && busbwBytes > 0) {
    bound.busbwBytesPerSecond = busbwBytes / bound.minSeconds;
    bound.busiestLinkBytesPerBusbwByte = static_cast<double>(busiestBytes) / busbwBytes;
  }
  return bound;
}

LinkBound topologyLinkBound(const std::string& topology, Backend backend, const HostLayout& hosts, int64_t numel,
                            int64_t elementBytes, const std::vector<double>& linkBitsPerSecond) {
  const Schedule schedule =
      topology == "native" ? nativeSchedule(backend, hosts) : makeSchedule(topology, hosts);
  return linkBound(schedule, hosts, numel, elementBytes, linkBitsPerSecond);
}

}  // namespace dtbench::comm
