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

// One message of this rank: a contiguous run of a transfer's pieces in one segment.
struct Message {
  const Transfer* transfer = nullptr;
  ElementRange range;
  bool inWorkspace = false;   // incoming only: arrives in the workspace, not in place
  int64_t workspaceOffset = 0;  // within its step's half of the workspace
};

// Work item (step, segment) of this rank: what it receives and what it sends.
struct Item {
  std::vector<Message> incoming;
  std::vector<Message> outgoing;
  std::vector<at::Tensor> buffers;  // where each incoming message lands
  std::vector<WorkPtr> receives;
  std::vector<WorkPtr> sends;
};

struct Plan {
  int segments = 1;
  std::vector<std::vector<Item>> items;  // [step][segment]
  int64_t stepWorkspace = 0;             // elements: the most one step receives into the workspace
};

void appendMessages(std::vector<Message>& out, const Transfer& t, int64_t numel, int chunks, int g, int segments) {
  bool open = false;  // the last message belongs to this transfer and may grow
  for (int c = t.firstChunk; c < t.endChunk; ++c) {
    const ElementRange r = segmentRange(numel, chunks, c, g, segments);
    if (r.size() == 0) continue;  // both sides skip empty pieces
    if (open && out.back().range.end == r.begin) {
      out.back().range.end = r.end;
    } else {
      out.push_back(Message{&t, r});
      open = true;
    }
  }
}

bool overlaps(const ElementRange& a, const ElementRange& b) { return a.begin < b.end && b.begin < a.end; }

Plan makePlan(const Schedule& schedule, int self, int64_t numel, int segments) {
  Plan plan;
  plan.segments = segments;
  plan.items.resize(schedule.steps.size());
  for (size_t s = 0; s < schedule.steps.size(); ++s) {
    int64_t stepWorkspace = 0;
    plan.items[s].resize(segments);
    for (int g = 0; g < segments; ++g) {
      Item& item = plan.items[s][g];
      for (const Transfer& t : schedule.steps[s].transfers) {
        if (t.dst == self) appendMessages(item.incoming, t, numel, schedule.chunks, g, segments);
        if (t.src == self) appendMessages(item.outgoing, t, numel, schedule.chunks, g, segments);
      }
      for (Message& in : item.incoming) {
        in.inWorkspace = in.transfer->reduce || std::any_of(item.outgoing.begin(), item.outgoing.end(),
                                                            [&](const Message& out) { return overlaps(in.range, out.range); });
        if (!in.inWorkspace) continue;
        in.workspaceOffset = stepWorkspace;
        stepWorkspace += in.range.size();
      }
    }
    plan.stepWorkspace = std::max(plan.stepWorkspace, stepWorkspace);
  }
  return plan;
}

// Applies one item's received messages to `flat`, grouping the contributions to one range so that
// reduced-precision sums happen in float32 (Note [Reduced-precision sums]).
void applyIncoming(const Item& item, const at::Tensor& flat) {
  const bool lowPrecision = flat.scalar_type() != at::kFloat;
  const auto sameSum = [&](size_t i, size_t j) {
    return item.incoming[j].transfer->reduce && item.incoming[j].range.begin == item.incoming[i].range.begin &&
           item.incoming[j].range.end == item.incoming[i].range.end;
  };
  size_t i = 0;
  while (i < item.incoming.size()) {
    const Message& first = item.incoming[i];
    at::Tensor target = flat.narrow(0, first.range.begin, first.range.size());
    if (!first.transfer->reduce) {
      if (first.inWorkspace) target.copy_(item.buffers[i]);
      ++i;
      continue;
    }
    size_t j = i;
    if (lowPrecision) {
      at::Tensor sum = target.to(at::kFloat);
      for (; j < item.incoming.size() && sameSum(i, j); ++j) sum.add_(item.buffers[j].to(at::kFloat));
      target.copy_(sum);
    } else {
      for (; j < item.incoming.size() && sameSum(i, j); ++j) target.add_(item.buffers[j]);
    }
    i = j;
  }
}

}  // namespace

ScheduleExecutor::ScheduleExecutor(int64_t segmentBytes) : segmentBytes_(segmentBytes) {
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
  Plan plan = makePlan(schedule, p2p.rank(), numel, segmentsFor(schedule, numel, flat.element_size()));
  if (plan.stepWorkspace > 0 && (!workspace_.defined() || workspace_.scalar_type() != flat.scalar_type() ||
                                 workspace_.numel() < 2 * plan.stepWorkspace))
    workspace_ = at::empty({2 * plan.stepWorkspace}, flat.options());

  const auto post = [&](size_t s, int g) {
    Item& item = plan.items[s][g];
    const int tag = static_cast<int>(s % (PointToPoint::kMaxTag + 1));
    const int64_t half = static_cast<int64_t>(s % 2) * plan.stepWorkspace;
    for (const Message& in : item.incoming) {
      item.buffers.push_back(in.inWorkspace ? workspace_.narrow(0, half + in.workspaceOffset, in.range.size())
                                            : flat.narrow(0, in.range.begin, in.range.size()));
      item.receives.push_back(p2p.recv(item.buffers.back(), in.transfer->src, tag));
    }
    for (const Message& out : item.outgoing)
      item.sends.push_back(p2p.send(flat.narrow(0, out.range.begin, out.range.size()), out.transfer->dst, tag));
  };

  for (int g = 0; g < plan.segments; ++g) post(0, g);
  for (size_t s = 0; s < plan.items.size(); ++s)
    for (int g = 0; g < plan.segments; ++g) {
      Item& item = plan.items[s][g];
      waitAll(item.receives);
      waitAll(item.sends);  // before anything lands in a range this rank is still sending
      applyIncoming(item, flat);
      item.buffers.clear();
      if (s + 1 < plan.items.size()) post(s + 1, g);
    }
}

void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor, int64_t segmentBytes) {
  ScheduleExecutor(segmentBytes).run(schedule, p2p, tensor);
}

}  // namespace dtbench::comm
