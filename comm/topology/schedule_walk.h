#pragma once
// How one rank walks a Schedule: its plan (the messages of each work item, where each incoming one
// lands, which receives are posted ahead) and the order in which it posts and waits for the items.
// Pure data and no LibTorch, so comm::ScheduleExecutor runs it and the predictor's network model
// (experiments/predict/network_model.h) replays it: the model follows exactly the walk that runs.
// The rules, and why: Note [Pipelined schedules] and Note [Walking a Schedule] in
// comm/schedule_executor.h.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

// How a rank walks the items (Note [Walking a Schedule]).
enum class ScheduleWalk {
  kBothDirections,  // receives ahead, a two-segment first-step window, diagonal order: across hosts
  kStepByStep,      // items in (step, segment) order, each posting its receives and sends together, all of
                    // the first step at once: within one host, where shared memory is no connection
                    // to share and this measured faster (docs/benchmarks-history.md, "The link bound: why trees
                    // and stars ran at half of it")
};

// Segments of a Schedule's first step whose sends are in flight at once under kBothDirections.
constexpr int kFirstStepWindow = 2;

// The largest message tag (PointToPoint::kMaxTag, which comm/schedule_executor.cpp asserts equal):
// step s travels with tag s mod (kWalkMaxTag + 1), and only a step whose tag has not wrapped posts
// receives ahead.
constexpr int kWalkMaxTag = 32767;

// The walk a rank takes for a Schedule spanning `hosts` hosts.
inline ScheduleWalk walkForHosts(int hosts) { return hosts > 1 ? ScheduleWalk::kBothDirections : ScheduleWalk::kStepByStep; }

// One message of a rank: a contiguous run of a transfer's pieces in one segment.
struct PlannedMessage {
  const Transfer* transfer = nullptr;
  ElementRange range;
  bool inWorkspace = false;     // incoming only: arrives in the workspace, not in place
  int64_t workspaceOffset = 0;  // within its segment's region of the workspace
  bool ahead = false;           // incoming only: posted when the run starts
};

// Work item (step, segment) of a rank: what it receives and what it sends.
struct PlannedItem {
  std::vector<PlannedMessage> incoming;
  std::vector<PlannedMessage> outgoing;
};

struct SchedulePlan {
  int segments = 1;
  std::vector<std::vector<PlannedItem>> items;  // [step][segment]
  // Segment g's region of the workspace starts at segmentBase[g] and holds the most one item of
  // the segment receives into the workspace: one item of a segment at a time receives there.
  std::vector<int64_t> segmentBase;
  int64_t workspace = 0;  // elements: the sum of the regions
};

// Rank `self`'s plan for a tensor of `numel` elements cut into `segments` segments per chunk; the
// receives ahead are marked under kBothDirections only. The plan points into `schedule`.
SchedulePlan makeSchedulePlan(const Schedule& schedule, int self, int64_t numel, int segments, ScheduleWalk walk);

// The same, reading only `mine`: per step, the transfers of `schedule` whose source or destination
// is `self` (in the Schedule's order). For callers that plan every rank of a large world.
SchedulePlan makeSchedulePlan(const Schedule& schedule, const std::vector<std::vector<const Transfer*>>& mine,
                              int self, int64_t numel, int segments, ScheduleWalk walk);

// One thing a rank does, on item (step, segment).
struct WalkAction {
  enum class Kind {
    kPostReceivesAhead,  // post the item's receives marked `ahead`
    kPostReceives,       // post the item's other receives
    kPostSends,          // post the item's sends
    kComplete,           // wait for all of the item's receives and sends, then apply what arrived
  };
  Kind kind = Kind::kComplete;
  size_t step = 0;
  int segment = 0;
};

// The actions of a walk over `steps` × `segments` items, one at a time, in the order a rank takes
// them (the same for every rank; an action on an item without messages does nothing):
//  - kBothDirections: every item's receives ahead; every first-step item's other receives; the
//    sends of the first kFirstStepWindow first-step items; then each item in diagonal order (s + g,
//    then s) is completed, followed by the first-step sends of segment g + kFirstStepWindow (when
//    s = 0) and the receives and sends of (s + 1, g).
//  - kStepByStep: every first-step item's receives and sends; then each item in (s, g) order is
//    completed, followed by the receives and sends of (s + 1, g).
// O(1) memory: a large world's model keeps one walker per rank.
class ScheduleWalker {
 public:
  ScheduleWalker(size_t steps, int segments, ScheduleWalk walk);
  // Writes the next action; false when the walk is over.
  bool next(WalkAction& action);

 private:
  enum class Phase { kAhead, kFirstReceives, kFirstSends, kComplete, kAfterComplete, kDone };
  bool emit(WalkAction& action, WalkAction::Kind kind, size_t step, int segment);
  void advanceItem();  // to the next item in completion order

  size_t steps_;
  int segments_;
  bool bothDirections_;
  int window_;
  Phase phase_;
  size_t s_ = 0;  // the item (s_, g_) the phase is at
  int g_ = 0;
  int followUp_ = 0;  // kAfterComplete: which of the item's follow-up actions comes next
  size_t diagonal_ = 0;
};

// The most segment pieces that the ranks' walks under kBothDirections keep posted at once into one
// host's link, over every host and both directions: a host's uplink carries the sum over its ranks of
// the most pieces each has posted to other hosts at once, its downlink the sum over all ranks of the
// most each has posted to it at once. A piece is one chunk's share of a segment (a transfer of k chunks
// is k pieces per segment). Each rank's walk is replayed with enough segments to reach its steady
// state (one item per step on the diagonal behind the first step's window), so the figure does not
// depend on the tensor. 0 when the Schedule stays within one host. comm::crossHostSegmentBytes sizes
// the segment from it so that the pieces in flight fit the link's queue (comm/topology/registry.h).
// A slice (Schedule::slicePeriod, whole hosts of consecutive ranks to a period) gives the uplinks of
// its hosts: the Schedule repeats every period, so every host's uplink carries as much, and what
// leaves the hosts arrives at as many, alike. Throws std::invalid_argument when `hosts` is not the
// Schedule's world or a slice does not cover whole hosts. Cost: the sending ranks' transfers, times
// the steps and segments of one walk (a slice: its period's ranks only).
int64_t crossHostPiecesInFlight(const Schedule& schedule, const HostLayout& hosts);

}  // namespace dtbench::comm
