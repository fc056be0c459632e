#pragma once
// ScheduleExecutor: the one executor of every point-to-point topology. Runs a Schedule
// (schedule.h) as an in-place sum all-reduce of `tensor` over any PointToPoint.
//
// Contract: every rank of `p2p` calls run() with the same Schedule, the same segment size and a
// tensor of the same element count and type (CPU, contiguous, float32, float16 or bfloat16); on
// return every rank's tensor holds the element-wise sum. Failures propagate as CommError from the
// PointToPoint's Work (naming the peer); after one, the communicator is unusable. One thread uses
// an executor at a time; its workspace (the receive buffers) is kept and reused from call to call.
//
// Note [Pipelined schedules]
// Each chunk of the Schedule is cut into G segments of about `segmentBytes` (G = 1 for chunks
// smaller than that, or when segmentBytes is 0; at most kMaxSegments): G is segmentCount() of
// comm/topology/schedule.h. Piece (c, g) is segment g of chunk c (segmentRange() there), and a
// transfer's message for segment g is its pieces (c, g), one message per contiguous run (with
// G = 1: one message per transfer, as the Schedule says). Work item (step s, segment g)
// posts its receives and sends, waits for them and applies what arrived. Since every transfer of
// segment g touches only pieces (., g), item (s + 1, g) needs nothing but item (s, g): it is posted
// the moment (s, g) is applied, while (s, g + 1) ... are still in flight. So a ring's all-gather of
// a segment starts as soon as its reduction is done, and a tree or star forwards a segment up or
// down a level while the next one is still arriving: the chain is pipelined, and reductions
// overlap the transfers. Items are processed in (step, segment) order on every rank, so no two
// ranks can wait for each other (a rank waits only for items its peers post before anything they
// could wait for from it).
// Buffers: contributions to be added, and copies a rank would send itself in the same step, arrive
// in the workspace (two steps' worth: at most items of steps s and s + 1 are in flight); the rest
// arrives in place. Before an item's received data are applied, its sends are complete, so nothing
// the rank still sends is overwritten. Messages of step s carry tag s mod (kMaxTag + 1); the
// segments of a step follow each other in the same order on both sides, which per-tag message
// order (point_to_point.h) matches.
// Segment size: defaultSegmentBytes (comm/topology/registry.h) per topology, or --segment-bytes.
//
// Note [Reduced-precision sums]
// float16 and bfloat16 chunks travel in their own type (the bytes the user asked to measure) but
// are added in float32: when a rank receives several contributions for one chunk in one step (a
// star's hub, a clique's owner, a tree's parent), they are summed in float32 together with the
// rank's own chunk and rounded once. A ring rounds after each of its N-1 additions, as NCCL does.
// Small integers (|x| <= 256 for bfloat16, 2048 for float16) are summed exactly either way, which is
// what the tests check.

#include <ATen/ATen.h>

#include <cstdint>

#include "comm/point_to_point.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

class ScheduleExecutor {
 public:
  static constexpr int kMaxSegments = comm::kMaxSegments;  // schedule.h

  // segmentBytes 0: no segmentation (every transfer is one message per step).
  explicit ScheduleExecutor(int64_t segmentBytes = 0);
  int64_t segmentBytes() const { return segmentBytes_; }
  // Segments per chunk for a tensor of `numel` elements of `elementBytes` each (the same on every
  // rank: it depends only on the Schedule, the tensor's size and segmentBytes): segmentCount().
  int segmentsFor(const Schedule& schedule, int64_t numel, int64_t elementBytes) const;
  void run(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor);

 private:
  int64_t segmentBytes_;
  at::Tensor workspace_;
};

// One call with a fresh executor (tests and one-off use).
void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor,
                 int64_t segmentBytes = 0);

}  // namespace dtbench::comm
