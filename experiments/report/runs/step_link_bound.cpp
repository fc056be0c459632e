#include "experiments/report/runs/step_link_bound.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/topology/hosts.h"
#include "comm/topology/link_bound.h"
#include "comm/topology/registry.h"
#include "comm/topology/ring.h"
#include "experiments/report/runs/placement.h"

namespace dtbench::report {

StepLinkBound stepLinkBound(const RunData& run, const AllreduceModel& model) {
  StepLinkBound bound;
  if (!run.facts.linkRateBps) return bound;  // not on shaped links: nothing to say
  const std::map<std::string, std::optional<double>>& rates = *run.facts.linkRateBps;
  if (!model.available) {
    bound.why = model.why.empty() ? "no byte model" : model.why;
    return bound;
  }
  const std::vector<std::string> names = hostNames(run);
  const int world = run.worldSize();
  if (world < 2 || names.size() != static_cast<size_t>(world)) {
    bound.why = "config.json lists no host for every rank";
    return bound;
  }
  const comm::HostLayout hosts = comm::hostsFromNames(names);
  if (hosts.hosts.size() < 2) {
    bound.why = "all ranks ran on one host (" + names.front() + "), so no byte crosses a link";
    return bound;
  }
  std::vector<double> bitsPerSecond;
  for (const std::vector<int>& ranks : hosts.hosts) {
    const std::string& name = names[ranks.front()];
    const auto rate = rates.find(name);
    if (rate == rates.end() || !rate->second || !(*rate->second > 0)) {
      bound.why = "host " + name + " has no link rate in link_rate_bps (" +
                  (rate == rates.end() ? std::string("missing")
                   : rate->second   ? nlohmann::json(*rate->second).dump()
                                    : std::string("null")) +
                  ")";
      return bound;
    }
    bitsPerSecond.push_back(*rate->second);
  }
  const std::string topology = run.settings.comm.topology.name();
  // --ranks-per-host K: the schedule ran over the emulated hosts, its bytes crossed the real ones' links.
  const int perHost = run.settings.comm.ranksPerHost;
  // (native's algorithm is the backend's, which never saw the emulated hosts: its bound is over the real ones)
  const bool emulated = run.facts.world && run.facts.world->hostsEmulated && perHost > 0 && topology != "native";
  try {
    const comm::Schedule schedule =
        emulated ? comm::makeSchedule(topology, comm::hostsFromRanksPerHost(world, perHost))
                 : comm::Schedule{};
    for (size_t b = 0; b < model.bucketElements.size(); ++b) {
      const int64_t elements = model.bucketElements[b], elementBytes = model.bucketElementBytes[b];
      bound.minSeconds += emulated ? comm::linkBound(schedule, hosts, elements, elementBytes, bitsPerSecond).minSeconds
                                   : comm::topologyLinkBound(topology, run.settings.comm.connection.backend, hosts,
                                                             elements, elementBytes, bitsPerSecond)
                                         .minSeconds;
    }
  } catch (const std::exception& error) {
    bound.why = std::string("no link bound for topology '") + topology + "' (" + error.what() + ")";
    bound.minSeconds = 0;
    return bound;
  }
  if (!(bound.minSeconds > 0)) {
    bound.why = "no byte of its all-reduces crosses a link";
    return bound;
  }
  bound.available = true;
  bound.busbwBytesPerSecond =
      comm::ringBusBandwidth(static_cast<double>(model.gradientBytes) / bound.minSeconds, world);
  return bound;
}

}  // namespace dtbench::report
