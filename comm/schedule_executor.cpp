#include "comm/schedule_executor.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/tensor_element_type.h"
#include "comm/work.h"

namespace dtbench::comm {
namespace {

// Segments of a Schedule's first step whose sends are in flight at once (Note [Walking a Schedule]).
constexpr int kFirstStepWindow = 2;

// One message of this rank: a contiguous run of a transfer's pieces in one segment.
struct Message {
  const Transfer* transfer = nullptr;
  ElementRange range;
  bool inWorkspace = false;   // incoming only: arrives in the workspace, not in place
  int64_t workspaceOffset = 0;  // within its segment's region of the workspace
  bool ahead = false;           // incoming only: posted when the run starts (Note [Walking a Schedule])
};

// Work item (step, segment) of this rank: what it receives and what it sends.
struct Item {
  std::vector<Message> incoming;
  std::vector<Message> outgoing;
  std::vector<at::Tensor> buffers;  // where each incoming message lands, in `incoming`'s order
  std::vector<WorkPtr> receives;    // in `incoming`'s order
  std::vector<WorkPtr> sends;
};

struct Plan {
  int segments = 1;
  std::vector<std::vector<Item>> items;  // [step][segment]
  // Segment g's region of the workspace starts at segmentBase[g] and holds the most one item of
  // the segment receives into the workspace: one item of a segment at a time receives there.
  std::vector<int64_t> segmentBase;
  int64_t workspace = 0;  // elements: the sum of the regions
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

// Whether incoming message `in` of item (s, g) may be received in place from the start of the run
// (Note [Walking a Schedule]); `last` is one past the last step before s in which this rank sends
// to the message's source in segment g (0: none).
bool mayReceiveAhead(const Plan& plan, size_t s, int g, const Message& in, size_t last) {
  if (in.transfer->reduce || in.inWorkspace || s > static_cast<size_t>(PointToPoint::kMaxTag)) return false;
  if (last == 0) return false;
  const int peer = in.transfer->src;
  for (size_t t = last - 1; t < s; ++t) {
    const Item& earlier = plan.items[t][g];
    for (const Message& out : earlier.outgoing)
      if (overlaps(out.range, in.range) && out.transfer->dst != peer) return false;
    for (const Message& other : earlier.incoming)
      if (overlaps(other.range, in.range)) return false;
  }
  return true;
}

// Marks the receives posted ahead: per step and source, all of its messages or none, so that the
// messages of one (source, tag) are posted in the order the source sends them. One pass over the
// steps, keeping per segment the last step that sent to each peer.
void markReceivesAhead(Plan& plan) {
  std::vector<std::map<int, size_t>> lastSendTo(plan.segments);  // [segment]: peer -> one past the step
  for (size_t s = 0; s < plan.items.size(); ++s) {
    std::map<int, bool> ahead;  // source rank -> every message from it in step s may be posted ahead
    for (int g = 0; g < plan.segments; ++g)
      for (const Message& in : plan.items[s][g].incoming) {
        const auto found = lastSendTo[g].find(in.transfer->src);
        const size_t last = found == lastSendTo[g].end() ? 0 : found->second;
        const auto [it, inserted] = ahead.emplace(in.transfer->src, true);
        it->second = it->second && mayReceiveAhead(plan, s, g, in, last);
      }
    for (int g = 0; g < plan.segments; ++g) {
      for (Message& in : plan.items[s][g].incoming) in.ahead = ahead.at(in.transfer->src);
      for (const Message& out : plan.items[s][g].outgoing) lastSendTo[g][out.transfer->dst] = s + 1;
    }
  }
}

Plan makePlan(const Schedule& schedule, int self, int64_t numel, int segments, bool receivesAhead) {
  Plan plan;
  plan.segments = segments;
  plan.items.resize(schedule.steps.size());
  std::vector<int64_t> region(segments, 0);
  for (size_t s = 0; s < schedule.steps.size(); ++s) {
    plan.items[s].resize(segments);
    for (int g = 0; g < segments; ++g) {
      Item& item = plan.items[s][g];
      for (const Transfer& t : schedule.steps[s].transfers) {
        if (t.dst == self) appendMessages(item.incoming, t, numel, schedule.chunks, g, segments);
        if (t.src == self) appendMessages(item.outgoing, t, numel, schedule.chunks, g, segments);
      }
      int64_t itemWorkspace = 0;
      for (Message& in : item.incoming) {
        in.inWorkspace = in.transfer->reduce || std::any_of(item.outgoing.begin(), item.outgoing.end(),
                                                            [&](const Message& out) { return overlaps(in.range, out.range); });
        if (!in.inWorkspace) continue;
        in.workspaceOffset = itemWorkspace;
        itemWorkspace += in.range.size();
      }
      region[g] = std::max(region[g], itemWorkspace);
    }
  }
  for (int g = 0; g < segments; ++g) {
    plan.segmentBase.push_back(plan.workspace);
    plan.workspace += region[g];
  }
  if (receivesAhead) markReceivesAhead(plan);
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
  const bool bothDirections = walk_ == ScheduleWalk::kBothDirections;
  Plan plan = makePlan(schedule, p2p.rank(), numel, segmentsFor(schedule, numel, flat.element_size()), bothDirections);
  if (plan.workspace > 0 && (!workspace_.defined() || workspace_.scalar_type() != flat.scalar_type() ||
                             workspace_.numel() < plan.workspace))
    workspace_ = at::empty({plan.workspace}, flat.options());

  const auto tagOf = [](size_t s) { return static_cast<int>(s % (PointToPoint::kMaxTag + 1)); };
  const auto postReceive = [&](size_t s, int g, size_t i) {
    Item& item = plan.items[s][g];
    const Message& in = item.incoming[i];
    item.buffers[i] = in.inWorkspace ? workspace_.narrow(0, plan.segmentBase[g] + in.workspaceOffset, in.range.size())
                                     : flat.narrow(0, in.range.begin, in.range.size());
    item.receives[i] = p2p.recv(item.buffers[i], in.transfer->src, tagOf(s));
  };
  const auto postReceives = [&](size_t s, int g) {
    for (size_t i = 0; i < plan.items[s][g].incoming.size(); ++i)
      if (!plan.items[s][g].incoming[i].ahead) postReceive(s, g, i);
  };
  const auto postSends = [&](size_t s, int g) {
    Item& item = plan.items[s][g];
    for (const Message& out : item.outgoing)
      item.sends.push_back(p2p.send(flat.narrow(0, out.range.begin, out.range.size()), out.transfer->dst, tagOf(s)));
  };

  // Note [Walking a Schedule]: the receives ahead, then the first step's items.
  const size_t steps = plan.items.size();
  const int segments = plan.segments;
  for (size_t s = 0; s < steps; ++s)
    for (int g = 0; g < segments; ++g) {
      Item& item = plan.items[s][g];
      item.buffers.resize(item.incoming.size());
      item.receives.resize(item.incoming.size());
      for (size_t i = 0; i < item.incoming.size(); ++i)
        if (item.incoming[i].ahead) postReceive(s, g, i);
    }
  const int window = bothDirections ? kFirstStepWindow : segments;
  for (int g = 0; g < segments; ++g) {
    postReceives(0, g);
    if (!bothDirections) postSends(0, g);
  }
  if (bothDirections)
    for (int g = 0; g < std::min(segments, window); ++g) postSends(0, g);
  const auto process = [&](size_t s, int g) {
    Item& item = plan.items[s][g];
    waitAll(item.receives);
    waitAll(item.sends);  // before anything lands in a range this rank is still sending
    applyIncoming(item, flat);
    item.buffers.clear();
    if (s == 0 && g + window < segments) postSends(0, g + window);
    if (s + 1 < steps) {
      postReceives(s + 1, g);
      postSends(s + 1, g);
    }
  };
  if (!bothDirections) {
    for (size_t s = 0; s < steps; ++s)
      for (int g = 0; g < segments; ++g) process(s, g);
    return;
  }
  const size_t diagonals = steps + static_cast<size_t>(segments) - 1;
  for (size_t d = 0; d < diagonals; ++d)
    for (size_t s = d >= static_cast<size_t>(segments) ? d - segments + 1 : 0; s <= d && s < steps; ++s)
      process(s, static_cast<int>(d - s));
}

void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor, int64_t segmentBytes,
                 ScheduleWalk walk) {
  ScheduleExecutor(segmentBytes, walk).run(schedule, p2p, tensor);
}

}  // namespace dtbench::comm
