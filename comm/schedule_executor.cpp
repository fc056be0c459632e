#include "comm/schedule_executor.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/tensor_element_type.h"
#include "comm/work.h"

namespace dtbench::comm {
namespace {

static_assert(kWalkMaxTag == PointToPoint::kMaxTag, "the walk's tags are the transport's");

// What a rank's items have in flight: per item (step, segment) of the plan.
struct ItemWork {
  std::vector<at::Tensor> buffers;  // where each incoming message lands, in the item's `incoming` order
  std::vector<WorkPtr> receives;    // in `incoming`'s order
  std::vector<WorkPtr> sends;
};

// Applies one item's received messages to `flat`, grouping the contributions to one range so that
// reduced-precision sums happen in float32 (Note [Reduced-precision sums]).
void applyIncoming(const PlannedItem& item, const ItemWork& work, const at::Tensor& flat) {
  const bool lowPrecision = flat.scalar_type() != at::kFloat;
  const auto sameSum = [&](size_t i, size_t j) {
    return item.incoming[j].transfer->reduce && item.incoming[j].range.begin == item.incoming[i].range.begin &&
           item.incoming[j].range.end == item.incoming[i].range.end;
  };
  size_t i = 0;
  while (i < item.incoming.size()) {
    const PlannedMessage& first = item.incoming[i];
    at::Tensor target = flat.narrow(0, first.range.begin, first.range.size());
    if (!first.transfer->reduce) {
      if (first.inWorkspace) target.copy_(work.buffers[i]);
      ++i;
      continue;
    }
    size_t j = i;
    if (lowPrecision) {
      at::Tensor sum = target.to(at::kFloat);
      for (; j < item.incoming.size() && sameSum(i, j); ++j) sum.add_(work.buffers[j].to(at::kFloat));
      target.copy_(sum);
    } else {
      for (; j < item.incoming.size() && sameSum(i, j); ++j) target.add_(work.buffers[j]);
    }
    i = j;
  }
}

}  // namespace

ScheduleExecutor::ScheduleExecutor(int64_t segmentBytes, ScheduleWalk walk) : segmentBytes_(segmentBytes), walk_(walk) {
  if (segmentBytes < 0) throw std::invalid_argument("segment size must be >= 0 bytes (0: no segments)");
}

int ScheduleExecutor::segmentsFor(const Schedule& schedule, int64_t numel, int64_t elementBytes) const {
  return segmentCount(schedule, numel, elementBytes, segmentBytes_);
}

void ScheduleExecutor::run(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor) {
  if (p2p.size() != schedule.worldSize)
    throw std::invalid_argument("schedule '" + schedule.topology + "' is for " + std::to_string(schedule.worldSize) +
                                " ranks but the communicator has " + std::to_string(p2p.size()));
  if (!tensor.device().is_cpu() || !tensor.is_contiguous())
    throw std::invalid_argument("point-to-point all-reduce needs a contiguous CPU tensor");
  elementTypeOf(tensor.scalar_type());
  const at::Tensor flat = tensor.view({-1});
  const int64_t numel = flat.numel();
  if (schedule.steps.empty() || numel == 0) return;
  const SchedulePlan plan =
      makeSchedulePlan(schedule, p2p.rank(), numel, segmentsFor(schedule, numel, flat.element_size()), walk_);
  if (plan.workspace > 0 && (!workspace_.defined() || workspace_.scalar_type() != flat.scalar_type() ||
                             workspace_.numel() < plan.workspace))
    workspace_ = at::empty({plan.workspace}, flat.options());
  std::vector<std::vector<ItemWork>> work(plan.items.size(), std::vector<ItemWork>(plan.segments));
  for (size_t s = 0; s < plan.items.size(); ++s)
    for (int g = 0; g < plan.segments; ++g) {
      work[s][g].buffers.resize(plan.items[s][g].incoming.size());
      work[s][g].receives.resize(plan.items[s][g].incoming.size());
    }

  const auto tagOf = [](size_t s) { return static_cast<int>(s % (PointToPoint::kMaxTag + 1)); };
  const auto postReceives = [&](size_t s, int g, bool ahead) {
    const PlannedItem& item = plan.items[s][g];
    ItemWork& w = work[s][g];
    for (size_t i = 0; i < item.incoming.size(); ++i) {
      const PlannedMessage& in = item.incoming[i];
      if (in.ahead != ahead) continue;
      w.buffers[i] = in.inWorkspace ? workspace_.narrow(0, plan.segmentBase[g] + in.workspaceOffset, in.range.size())
                                    : flat.narrow(0, in.range.begin, in.range.size());
      w.receives[i] = p2p.recv(w.buffers[i], in.transfer->src, tagOf(s));
    }
  };
  const auto postSends = [&](size_t s, int g) {
    for (const PlannedMessage& out : plan.items[s][g].outgoing)
      work[s][g].sends.push_back(p2p.send(flat.narrow(0, out.range.begin, out.range.size()), out.transfer->dst, tagOf(s)));
  };
  const auto complete = [&](size_t s, int g) {
    ItemWork& w = work[s][g];
    waitAll(w.receives);
    waitAll(w.sends);  // before anything lands in a range this rank is still sending
    applyIncoming(plan.items[s][g], w, flat);
    w.buffers.clear();
  };

  // Note [Walking a Schedule]: the order is ScheduleWalker's (comm/topology/schedule_walk.h).
  ScheduleWalker walker(plan.items.size(), plan.segments, walk_);
  WalkAction action;
  while (walker.next(action)) switch (action.kind) {
      case WalkAction::Kind::kPostReceivesAhead: postReceives(action.step, action.segment, true); break;
      case WalkAction::Kind::kPostReceives: postReceives(action.step, action.segment, false); break;
      case WalkAction::Kind::kPostSends: postSends(action.step, action.segment); break;
      case WalkAction::Kind::kComplete: complete(action.step, action.segment); break;
    }
}

void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor, int64_t segmentBytes,
                 ScheduleWalk walk) {
  ScheduleExecutor(segmentBytes, walk).run(schedule, p2p, tensor);
}

}  // namespace dtbench::comm
