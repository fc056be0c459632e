#include "experiments/capture/interface_counters.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/clock.h"

namespace dtbench::capture {

InterfaceCounters readInterfaceCounters(const std::string& interface, const std::string& procNetDev) {
  InterfaceCounters c;
  c.t_s = common::unixSeconds();
  std::ifstream in(procNetDev);
  if (!in) throw std::runtime_error("interface " + interface + ": cannot read " + procNetDev);
  // "  name: rx_bytes rx_packets errs drop fifo frame compressed multicast tx_bytes tx_packets ..."
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto first = line.find_first_not_of(' ');
    if (line.substr(first, colon - first) != interface) continue;
    std::istringstream fields(line.substr(colon + 1));
    long long v[10];
    for (auto& x : v)
      if (!(fields >> x) || x < 0)
        throw std::runtime_error("interface " + interface + ": " + procNetDev + " has a malformed line: " + line);
    c.rxBytes = v[0];
    c.rxPackets = v[1];
    c.txBytes = v[8];
    c.txPackets = v[9];
    return c;
  }
  throw std::runtime_error("interface " + interface + ": not in " + procNetDev +
                           " (is it an interface of this network namespace?)");
}

}  // namespace dtbench::capture
