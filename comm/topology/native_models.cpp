#include "comm/topology/native_models.h"

#include "comm/topology/registry.h"

namespace dtbench::comm {

const NativeModel& nativeModel(Backend backend) { return backendRow(backend).native; }

Topology nativeTopology(Backend backend, int worldSize) {
  return Topology::parse(nativeModel(backend).modelledAs(worldSize));
}

Schedule nativeSchedule(Backend backend, const HostLayout& hosts) {
  return nativeTopology(backend, hosts.worldSize()).schedule(hosts);
}

Schedule nativeSlice(Backend backend, const HostLayout& hosts, int period) {
  return nativeTopology(backend, hosts.worldSize()).slice(hosts, period);
}

}  // namespace dtbench::comm
