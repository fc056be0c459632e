#pragma once
// TopologyAllreduce: a Communicator's sum all-reduce by --topology, with its traffic recorded.
//   native  the backend's own all-reduce; traffic recorded as the ring formula (kind = modelled).
//   others  the topology's Schedule run by the pipelined executor (comm/schedule_executor.h) over
//           the communicator's point-to-point, through CountingPointToPoint (kind = counted, plus
//           the 10 ms timeline). Under an injected impairment every transfer is one message (no
//           segments): the impairment holds each message for its delay, and cutting a chunk into
//           segments would charge that delay once per segment.
//
// Contract: every rank constructs it with the same topology and host layout and calls allreduce()
// with tensors of equal count and type. allreduce() is synchronous: on return the tensor holds the
// sum (failures: CommError from the communicator, naming the peer). Element types: native follows
// comm/element_type.h's table (others rejected by name before anything is sent); point-to-point
// topologies take float32, float16 and bfloat16. The Communicator and TrafficRecorder outlive it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "comm/impairment/impaired_point_to_point.h"
#include "comm/impairment/impairment.h"
#include "comm/schedule_executor.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology/schedule.h"
#include "comm/traffic/traffic_recorder.h"

namespace dtbench::comm {

class TopologyAllreduce {
 public:
  // `segmentBytes`: the executor's pipeline segment (Note [Pipelined schedules]); 0: whole chunks;
  // none: the topology's defaultSegmentBytes(hosts) (comm/topology/registry.h).
  // `impairment` (comm/impairment/impairment.h) holds every send of the point-to-point topologies; an active
  // one with topology "native" throws std::invalid_argument (the backend moves those bytes itself);
  // `holdBounds` bound its holds (comm/impairment/impaired_point_to_point.h).
  TopologyAllreduce(Communicator& communicator, Topology topology, const HostLayout& hosts, TrafficRecorder& recorder,
                    const Impairment& impairment = {}, std::optional<int64_t> segmentBytes = std::nullopt,
                    HoldBounds holdBounds = {});
  Topology topology() const { return topology_; }
  // nullopt for native.
  const std::optional<Schedule>& schedule() const { return schedule_; }
  // The executor's segment (0: whole chunks, as under an impairment).
  int64_t segmentBytes() const { return executor_.segmentBytes(); }
  void allreduce(const at::Tensor& tensor);

 private:
  Communicator& communicator_;
  Topology topology_;
  std::optional<Schedule> schedule_;
  TrafficRecorder& recorder_;
  ScheduleExecutor executor_;
  std::unique_ptr<ImpairedPointToPoint> impaired_;  // with an active impairment
};

}  // namespace dtbench::comm
