#include "experiments/report/step_link_bound.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/link_bound.h"
#include "comm/topology/registry.h"
#include "comm/topology/ring.h"
#include "experiments/report/placement.h"

namespace dtbench::report {

StepLinkBound stepLinkBound(const RunData& run, const AllreduceModel& model) {
  StepLinkBound bound;
  if (!run.config.is_object() || !run.config.contains("link_rate_bps") || !run.config["link_rate_bps"].is_object())
    return bound;  // not on shaped links: nothing to say
  const nlohmann::json& rates = run.config["link_rate_bps"];
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
    if (!rates.contains(name) || !rates[name].is_number() || !(rates[name].get<double>() > 0)) {
      bound.why = "host " + name + " has no link rate in link_rate_bps (" +
                  (rates.contains(name) ? rates[name].dump() : std::string("missing")) + ")";
      return bound;
    }
    bitsPerSecond.push_back(rates[name].get<double>());
  }
  const std::string topology = run.configText("topology", "native");
  // --ranks-per-host K: the schedule ran over the emulated hosts, its bytes crossed the real ones' links.
  const int perHost = static_cast<int>(run.configNumber("ranks_per_host", 0));
  // (native's algorithm is the backend's, which never saw the emulated hosts: its bound is over the real ones)
  const bool emulated = run.configFlag("hosts_emulated", false) && perHost > 0 && topology != "native";
  try {
    const comm::Schedule schedule =
        emulated ? comm::makeSchedule(topology, comm::hostsFromRanksPerHost(world, perHost))
                 : comm::Schedule{};
    for (size_t b = 0; b < model.bucketElements.size(); ++b) {
      const int64_t elements = model.bucketElements[b], elementBytes = model.bucketElementBytes[b];
      bound.minSeconds += emulated ? comm::linkBound(schedule, hosts, elements, elementBytes, bitsPerSecond).minSeconds
                                   : comm::topologyLinkBound(topology, hosts, elements, elementBytes, bitsPerSecond)
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
