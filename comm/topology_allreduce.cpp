#include "comm/topology_allreduce.h"

#include <utility>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "comm/point_to_point.h"
#include "comm/traffic/counting_point_to_point.h"
#include "comm/work.h"

namespace dtbench::comm {

TopologyAllreduce::TopologyAllreduce(Communicator& communicator, Topology topology, const HostLayout& hosts,
                                     TrafficRecorder& recorder, const Impairment& impairment,
                                     std::optional<int64_t> segmentBytes, HoldBounds holdBounds)
    : communicator_(communicator),
      topology_(topology),
      recorder_(recorder),
      // Under an impairment every transfer is one message (topology_allreduce.h). Across hosts the
      // executor keeps both directions of each link busy; within one it walks step by step (Note
      // [Walking a Schedule] in comm/schedule_executor.h).
      executor_(impairment.active() ? 0 : segmentBytes.value_or(topology.defaultSegmentBytes(hosts)),
                walkForHosts(static_cast<int>(hosts.hosts.size()))) {
  if (hosts.worldSize() != communicator.size())
    throw std::invalid_argument("the host layout covers " + std::to_string(hosts.worldSize()) +
                                " ranks but the world has " + std::to_string(communicator.size()));
  if (!topology.native()) schedule_ = topology.schedule(hosts);
  if (impairment.active()) {
    if (!schedule_)
      throw std::invalid_argument(
          "injected network impairment acts on the bytes dtbench moves itself; with --topology "
          "native the backend moves them: pick a point-to-point topology (ring, tree, ...)");
    impaired_ = std::make_unique<ImpairedPointToPoint>(communicator, impairment, std::move(holdBounds));
  }
}

void TopologyAllreduce::allreduce(const at::Tensor& tensor) {
  if (!schedule_) {
    communicator_.allreduce(tensor, ReduceOp::kSum)->wait();
    recorder_.recordModelledAllreduce(static_cast<int64_t>(tensor.nbytes()));
    return;
  }
  PointToPoint& transport = impaired_ ? static_cast<PointToPoint&>(*impaired_) : communicator_;
  CountingPointToPoint counting(transport, recorder_);
  executor_.run(*schedule_, counting, tensor);
}

}  // namespace dtbench::comm
