#include "comm/topology/native_models.h"

#include <stdexcept>

#include "comm/topology/registry.h"

namespace dtbench::comm {
namespace {

bool powerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The topology a backend's own all-reduce is modelled as (see the header).
const char* modelledAs(Backend backend, int worldSize) {
  return backend == Backend::kMpi && powerOfTwo(worldSize) ? "hierarchical" : "ring";
}

}  // namespace

const NativeModel& nativeModel(Backend backend) {
  static const NativeModel kGloo{Backend::kGloo, 1.0, false, "a ring over the ranks (Gloo's ring all-reduce)"};
  static const NativeModel kMpi{Backend::kMpi, 1.0, false,
                                "a ring over the hosts for a power-of-two world (libnbc's reduce-scatter + "
                                "all-gather), else a ring over the ranks (libnbc's ring)"};
  static const NativeModel kNccl{Backend::kNccl, 1.0, true,
                                 "a ring over the ranks (NCCL's ring; receive slots posted ahead)"};
  switch (backend) {
    case Backend::kGloo: return kGloo;
    case Backend::kMpi: return kMpi;
    case Backend::kNccl: return kNccl;
  }
  throw std::logic_error("nativeModel: a backend without a row");
}

Topology nativeTopology(Backend backend, int worldSize) { return Topology::parse(modelledAs(backend, worldSize)); }

Schedule nativeSchedule(Backend backend, const HostLayout& hosts) {
  return nativeTopology(backend, hosts.worldSize()).schedule(hosts);
}

Schedule nativeSlice(Backend backend, const HostLayout& hosts, int period) {
  return nativeTopology(backend, hosts.worldSize()).slice(hosts, period);
}

}  // namespace dtbench::comm
