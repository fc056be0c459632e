#include "comm/topology_allreduce.h"

#include <stdexcept>

#include "comm/counting_point_to_point.h"
#include "comm/topology/executor.h"
#include "comm/topology/topology.h"

namespace dtbench::comm {

TopologyAllreduce::TopologyAllreduce(Communicator& communicator, const std::string& topology,
                                     const HostLayout& hosts, TrafficRecorder& recorder)
    : communicator_(communicator), topology_(topology), recorder_(recorder) {
  checkTopologyName(topology);
  if (hosts.worldSize() != communicator.size())
    throw std::invalid_argument("the host layout covers " + std::to_string(hosts.worldSize()) +
                                " ranks but the world has " + std::to_string(communicator.size()));
  if (topology != "native") schedule_ = makeSchedule(topology, hosts);
}

void TopologyAllreduce::allreduce(const at::Tensor& tensor) {
  if (!schedule_) {
    communicator_.allreduce(tensor, ReduceOp::kSum)->wait();
    recorder_.recordModelledAllreduce(static_cast<int64_t>(tensor.nbytes()));
    return;
  }
  CountingPointToPoint counting(communicator_, recorder_);
  runSchedule(*schedule_, counting, tensor);
}

}  // namespace dtbench::comm
