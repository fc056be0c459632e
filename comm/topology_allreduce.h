#pragma once
// TopologyAllreduce: a Communicator's sum all-reduce by --topology, with its traffic recorded.
//   native  the backend's own all-reduce; traffic recorded as the ring formula (kind = modelled).
//   others  the topology's Schedule run by the executor over the communicator's point-to-point,
//           through CountingPointToPoint (kind = counted, plus the 10 ms timeline).
//
// Contract: every rank constructs it with the same topology and host layout and calls allreduce()
// with tensors of equal count and type. allreduce() is synchronous: on return the tensor holds the
// sum (failures: CommError from the communicator, naming the peer). Element types: native follows
// comm/element_type.h's table (others rejected by name before anything is sent); point-to-point
// topologies take float32, float16 and bfloat16. The Communicator and TrafficRecorder outlive it.

#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "comm/impaired_point_to_point.h"
#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"
#include "comm/traffic.h"

namespace dtbench::comm {

class TopologyAllreduce {
 public:
  // `impairment` (comm/impairment.h) holds every send of the point-to-point topologies; an active
  // one with topology "native" throws std::invalid_argument (the backend moves those bytes itself).
  TopologyAllreduce(Communicator& communicator, const std::string& topology, const HostLayout& hosts,
                    TrafficRecorder& recorder, const Impairment& impairment = {});
  const std::string& topology() const { return topology_; }
  // nullopt for native.
  const std::optional<Schedule>& schedule() const { return schedule_; }
  void allreduce(const at::Tensor& tensor);

 private:
  Communicator& communicator_;
  std::string topology_;
  std::optional<Schedule> schedule_;
  TrafficRecorder& recorder_;
  std::unique_ptr<ImpairedPointToPoint> impaired_;  // with an active impairment
};

}  // namespace dtbench::comm
