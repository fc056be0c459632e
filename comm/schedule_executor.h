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
// overlap the transfers. How the executor walks the items: Note [Walking a Schedule].
// Buffers: contributions to be added, and copies a rank would send itself in the same step, arrive
// in the workspace, in a region per segment (one item of a segment receives at a time: item
// (s + 1, g) is posted after (s, g) was applied); the rest arrives in place. Before an item's
// received data are applied, its sends are complete, so nothing the rank still sends is
// overwritten. Messages of step s carry tag s mod (kMaxTag + 1); the segments of a step follow each
// other in the same order on both sides, which per-tag message order (point_to_point.h) matches.
//
// Note [Walking a Schedule]
// A link between two hosts is one connection carrying both directions, and the transports send
// nothing until the receiver asked for it: Gloo waits for the receiver's "ready" message, Open MPI's
// rendezvous for its acknowledgement. Such a request queues behind the data the receiver itself is
// sending on that connection. Measured on the emulated cluster (docs/benchmarks-history.md, "The link
// bound"), a leaf of a tree that asked for the broadcast only after its own reduce segments were
// under way had its request arrive behind all of them, so the root's broadcast started when the
// reduction ended: the two phases, which should share the link's two directions, took turns (0.5
// of the link bound). Hence three rules, the walk ScheduleWalk::kBothDirections, which
// comm::TopologyAllreduce takes for a Schedule across hosts:
//  - Receives ahead. A receive that lands in place (not added, not overlapping what the item
//    sends) is posted when the run starts, before any send, if its data cannot arrive before every
//    earlier use of its range is over: the rank sent something to the same peer in an earlier item
//    of the segment (the peer posts its send only after it received that, so by then those bytes
//    were read even if that send's wait() comes later), and from that item on no other message of
//    the rank touches the range, except sends to that same peer. A tree's
//    broadcast, and a two-rank ring's or clique's second step, qualify; per step and source all
//    messages or none, so a source's messages of one tag are posted in the order it sends them.
//    A receive into the workspace is posted at the start too when it is its segment's first use of
//    the workspace (the region is then the item's alone until it is applied): a tree's root, whose
//    children's sums come after the first step, asks for them before it sends anything, so those
//    "ready" notices do not queue behind its own broadcast. Every other receive of the first step
//    is posted at the start as well (before any send), and the rest when their item is posted.
//  - A window on the first step. Only the first kFirstStepWindow (2) segments of the first step
//    send at once; segment g + 2 sends when segment g's item was applied. A transport that shares
//    the link among all outstanding messages to one peer (Open MPI) would otherwise deliver every
//    segment at the end, and the next level could not start before. Later steps are paced by the
//    items before them.
//  - Diagonal order. Items are waited for in order of s + g, then s: a root waits for segment k's
//    broadcast sends and segment k + 1's reduction in turn, so both directions advance together.
//    No two ranks wait for each other: item (s, g) needs only its peers' items (s, g), whose sends
//    are posted once (s - 1, g), or for the first step (0, g - 2), was applied: earlier diagonals.
// None of this changes which bytes move or in which order a rank adds them: results are bit for bit
// those of the step-by-step walk (ScheduleWalk::kStepByStep), which comm::TopologyAllreduce keeps for
// a Schedule within one host: over Open MPI's shared memory on 2 cores it measured faster there.
// The plan of each rank's items and the order of the walk are data (comm/topology/schedule_walk.h),
// shared with the predictor's network model, which replays the same walk on modelled links.
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
#include "comm/topology/schedule_walk.h"

namespace dtbench::comm {

class ScheduleExecutor {
 public:
  static constexpr int kMaxSegments = comm::kMaxSegments;  // schedule.h

  // segmentBytes 0: no segmentation (every transfer is one message per step).
  explicit ScheduleExecutor(int64_t segmentBytes = 0, ScheduleWalk walk = ScheduleWalk::kBothDirections);
  int64_t segmentBytes() const { return segmentBytes_; }
  ScheduleWalk walk() const { return walk_; }
  // Segments per chunk for a tensor of `numel` elements of `elementBytes` each (the same on every
  // rank: it depends only on the Schedule, the tensor's size and segmentBytes): segmentCount().
  int segmentsFor(const Schedule& schedule, int64_t numel, int64_t elementBytes) const;
  void run(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor);

 private:
  int64_t segmentBytes_;
  ScheduleWalk walk_;
  at::Tensor workspace_;
};

// One call with a fresh executor (tests and one-off use).
void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor,
                 int64_t segmentBytes = 0, ScheduleWalk walk = ScheduleWalk::kBothDirections);

}  // namespace dtbench::comm
