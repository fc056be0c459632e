#include "comm/topology/schedule_walk.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dtbench::comm {
namespace {

void appendMessages(std::vector<PlannedMessage>& out, const Transfer& t, int64_t numel, int chunks, int g, int segments) {
  bool open = false;  // the last message belongs to this transfer and may grow
  for (int c = t.firstChunk; c < t.endChunk; ++c) {
    const ElementRange r = segmentRange(numel, chunks, c, g, segments);
    if (r.size() == 0) continue;  // both sides skip empty pieces
    if (open && out.back().range.end == r.begin) {
      out.back().range.end = r.end;
    } else {
      out.push_back(PlannedMessage{&t, r});
      open = true;
    }
  }
}

// Which of an item's messages overlap a range: sorted by where they begin, with, for every prefix,
// the largest end and the largest end among messages to another peer than that one's. Answers in
// O(log n), so that a clique of thousands of ranks (thousands of messages per item) plans in
// O(n log n), not O(n²). An item of a few messages (most items: the executor plans every all-reduce)
// is scanned in place, with nothing allocated.
class RangeIndex {
 public:
  explicit RangeIndex(const std::vector<PlannedMessage>& messages) {
    if (messages.size() <= kScanned) {
      few_ = &messages;
      return;
    }
    std::vector<const PlannedMessage*> sorted;
    sorted.reserve(messages.size());
    for (const PlannedMessage& m : messages)
      if (m.range.size() > 0) sorted.push_back(&m);
    std::sort(sorted.begin(), sorted.end(),
              [](const PlannedMessage* a, const PlannedMessage* b) { return a->range.begin < b->range.begin; });
    Best best;
    for (const PlannedMessage* m : sorted) {
      const int64_t end = m->range.end;
      const int peer = m->transfer->dst;
      if (end > best.end) {
        if (peer != best.peer) best.otherEnd = best.end;
        best.end = end;
        best.peer = peer;
      } else if (peer != best.peer) {
        best.otherEnd = std::max(best.otherEnd, end);
      }
      begins_.push_back(m->range.begin);
      prefix_.push_back(best);
    }
  }
  // Whether a message overlaps `range`.
  bool overlaps(const ElementRange& range) const {
    if (few_) return std::any_of(few_->begin(), few_->end(), [&](const PlannedMessage& m) { return meets(m, range); });
    const size_t k = before(range.end);
    return k > 0 && prefix_[k - 1].end > range.begin;
  }
  // Whether a message to another peer than `peer` overlaps `range`.
  bool overlapsExcept(const ElementRange& range, int peer) const {
    if (few_)
      return std::any_of(few_->begin(), few_->end(),
                         [&](const PlannedMessage& m) { return m.transfer->dst != peer && meets(m, range); });
    const size_t k = before(range.end);
    if (k == 0) return false;
    const Best& b = prefix_[k - 1];
    return (b.peer != peer ? b.end : b.otherEnd) > range.begin;
  }

 private:
  struct Best {
    int64_t end = std::numeric_limits<int64_t>::min();       // the largest end
    int peer = -1;                                           // its message's destination
    int64_t otherEnd = std::numeric_limits<int64_t>::min();  // the largest end of a message to another
  };
  // How many messages begin before `end`.
  size_t before(int64_t end) const {
    return static_cast<size_t>(std::lower_bound(begins_.begin(), begins_.end(), end) - begins_.begin());
  }
  static bool meets(const PlannedMessage& m, const ElementRange& r) { return m.range.begin < r.end && r.begin < m.range.end; }
  static constexpr size_t kScanned = 8;
  const std::vector<PlannedMessage>* few_ = nullptr;  // the messages, when there are at most kScanned
  std::vector<int64_t> begins_;
  std::vector<Best> prefix_;
};

// An item's indexes: its outgoing messages (with their destinations) and its incoming ones.
struct ItemIndex {
  RangeIndex outgoing, incoming;
  explicit ItemIndex(const PlannedItem& item) : outgoing(item.outgoing), incoming(item.incoming) {}
};

// Whether incoming message `in` of item (s, g) may be received in place from the start of the run
// (Note [Walking a Schedule] in comm/schedule_executor.h); `last` is one past the last step before s
// in which this rank sends to the message's source in segment g (0: none).
// `workspaceUsed`: whether an item of segment g before step s receives into the workspace.
bool mayReceiveAhead(const std::vector<std::vector<ItemIndex>>& index, size_t s, int g, const PlannedMessage& in,
                     size_t last, bool workspaceUsed) {
  if (s > static_cast<size_t>(kWalkMaxTag)) return false;
  if (in.inWorkspace) return !workspaceUsed;  // the segment's region is this item's until it is applied
  if (last == 0) return false;
  const int peer = in.transfer->src;
  for (size_t t = last - 1; t < s; ++t) {
    const ItemIndex& earlier = index[t][g];
    if (earlier.outgoing.overlapsExcept(in.range, peer) || earlier.incoming.overlaps(in.range)) return false;
  }
  return true;
}

// Marks the receives posted ahead: per step and source, all of its messages or none, so that the
// messages of one (source, tag) are posted in the order the source sends them. One pass over the
// steps, keeping per segment the last step that sent to each peer.
void markReceivesAhead(SchedulePlan& plan) {
  std::vector<std::vector<ItemIndex>> index(plan.items.size());
  for (size_t s = 0; s < plan.items.size(); ++s)
    for (const PlannedItem& item : plan.items[s]) index[s].emplace_back(item);
  std::vector<std::map<int, size_t>> lastSendTo(plan.segments);  // [segment]: peer -> one past the step
  std::vector<bool> workspaceUsed(plan.segments, false);         // [segment]: by an earlier step
  for (size_t s = 0; s < plan.items.size(); ++s) {
    std::map<int, bool> ahead;  // source rank -> every message from it in step s may be posted ahead
    for (int g = 0; g < plan.segments; ++g)
      for (const PlannedMessage& in : plan.items[s][g].incoming) {
        const auto found = lastSendTo[g].find(in.transfer->src);
        const size_t last = found == lastSendTo[g].end() ? 0 : found->second;
        const auto [it, inserted] = ahead.emplace(in.transfer->src, true);
        it->second = it->second && mayReceiveAhead(index, s, g, in, last, workspaceUsed[g]);
      }
    for (int g = 0; g < plan.segments; ++g) {
      for (PlannedMessage& in : plan.items[s][g].incoming) {
        in.ahead = ahead.at(in.transfer->src);
        if (in.inWorkspace) workspaceUsed[g] = true;
      }
      for (const PlannedMessage& out : plan.items[s][g].outgoing) lastSendTo[g][out.transfer->dst] = s + 1;
    }
  }
}

}  // namespace

SchedulePlan makeSchedulePlan(const Schedule& schedule, const std::vector<std::vector<const Transfer*>>& mine, int self,
                              int64_t numel, int segments, ScheduleWalk walk) {
  SchedulePlan plan;
  plan.segments = segments;
  plan.items.resize(schedule.steps.size());
  std::vector<int64_t> region(segments, 0);
  for (size_t s = 0; s < schedule.steps.size(); ++s) {
    plan.items[s].resize(segments);
    for (int g = 0; g < segments; ++g) {
      PlannedItem& item = plan.items[s][g];
      for (const Transfer* t : mine[s]) {
        if (t->dst == self) appendMessages(item.incoming, *t, numel, schedule.chunks, g, segments);
        if (t->src == self) appendMessages(item.outgoing, *t, numel, schedule.chunks, g, segments);
      }
      int64_t itemWorkspace = 0;
      const RangeIndex sends(item.outgoing);
      for (PlannedMessage& in : item.incoming) {
        in.inWorkspace = in.transfer->reduce || sends.overlaps(in.range);
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
  if (walk == ScheduleWalk::kBothDirections) markReceivesAhead(plan);
  return plan;
}

SchedulePlan makeSchedulePlan(const Schedule& schedule, int self, int64_t numel, int segments, ScheduleWalk walk) {
  std::vector<std::vector<const Transfer*>> mine(schedule.steps.size());
  for (size_t s = 0; s < schedule.steps.size(); ++s)
    for (const Transfer& t : schedule.steps[s].transfers)
      if (t.src == self || t.dst == self) mine[s].push_back(&t);
  return makeSchedulePlan(schedule, mine, self, numel, segments, walk);
}

ScheduleWalker::ScheduleWalker(size_t steps, int segments, ScheduleWalk walk)
    : steps_(steps),
      segments_(segments),
      bothDirections_(walk == ScheduleWalk::kBothDirections),
      window_(bothDirections_ ? kFirstStepWindow : segments),
      phase_(steps == 0 || segments < 1 ? Phase::kDone : bothDirections_ ? Phase::kAhead : Phase::kFirstReceives) {}

bool ScheduleWalker::emit(WalkAction& action, WalkAction::Kind kind, size_t step, int segment) {
  action.kind = kind;
  action.step = step;
  action.segment = segment;
  return true;
}

void ScheduleWalker::advanceItem() {
  followUp_ = 0;
  if (!bothDirections_) {
    if (++g_ == segments_) {
      g_ = 0;
      ++s_;
    }
    phase_ = s_ < steps_ ? Phase::kComplete : Phase::kDone;
    return;
  }
  // Diagonal d = s + g, s rising within it.
  const size_t G = static_cast<size_t>(segments_);
  if (s_ + 1 < steps_ && s_ + 1 <= diagonal_) {
    ++s_;
  } else {
    ++diagonal_;
    if (diagonal_ + 1 >= steps_ + G) {
      phase_ = Phase::kDone;
      return;
    }
    s_ = diagonal_ >= G ? diagonal_ - G + 1 : 0;
  }
  g_ = static_cast<int>(diagonal_ - s_);
  phase_ = Phase::kComplete;
}

bool ScheduleWalker::next(WalkAction& action) {
  using Kind = WalkAction::Kind;
  for (;;) switch (phase_) {
      case Phase::kAhead:  // (s_, g_) row-major over every item
        if (s_ < steps_) {
          const size_t s = s_;
          const int g = g_;
          if (++g_ == segments_) {
            g_ = 0;
            ++s_;
          }
          return emit(action, Kind::kPostReceivesAhead, s, g);
        }
        phase_ = Phase::kFirstReceives;
        s_ = 0;
        g_ = 0;
        break;
      case Phase::kFirstReceives:  // g_ over the first step; step by step, each followed by its sends
        if (g_ < segments_) {
          if (!bothDirections_ && followUp_ == 1) {
            followUp_ = 0;
            return emit(action, Kind::kPostSends, 0, g_++);
          }
          if (!bothDirections_) {
            followUp_ = 1;
            return emit(action, Kind::kPostReceives, 0, g_);
          }
          return emit(action, Kind::kPostReceives, 0, g_++);
        }
        phase_ = bothDirections_ ? Phase::kFirstSends : Phase::kComplete;
        g_ = 0;
        break;
      case Phase::kFirstSends:
        if (g_ < std::min(segments_, window_)) return emit(action, Kind::kPostSends, 0, g_++);
        phase_ = Phase::kComplete;
        g_ = 0;
        break;
      case Phase::kComplete:
        phase_ = Phase::kAfterComplete;
        followUp_ = 0;
        return emit(action, Kind::kComplete, s_, g_);
      case Phase::kAfterComplete:
        if (followUp_ == 0) {
          followUp_ = 1;
          if (s_ == 0 && g_ + window_ < segments_) return emit(action, Kind::kPostSends, 0, g_ + window_);
        }
        if (followUp_ == 1) {
          followUp_ = 2;
          if (s_ + 1 < steps_) return emit(action, Kind::kPostReceives, s_ + 1, g_);
        }
        if (followUp_ == 2) {
          followUp_ = 3;
          if (s_ + 1 < steps_) return emit(action, Kind::kPostSends, s_ + 1, g_);
        }
        advanceItem();
        break;
      case Phase::kDone:
        return false;
    }
}

int64_t crossHostPiecesInFlight(const Schedule& schedule, const HostLayout& hosts) {
  if (hosts.worldSize() != schedule.worldSize)
    throw std::invalid_argument("the host layout has " + std::to_string(hosts.worldSize()) + " ranks but schedule '" +
                                schedule.topology + "' is for " + std::to_string(schedule.worldSize));
  const int perHost = hosts.consecutiveHostSize();
  const bool slice = schedule.slicePeriod > 0;
  if (slice && (perHost == 0 || schedule.slicePeriod % perHost != 0))
    throw std::invalid_argument("a slice of schedule '" + schedule.topology + "' (period " +
                                std::to_string(schedule.slicePeriod) +
                                ") counts pieces in flight only over hosts of equal size holding consecutive ranks, "
                                "whole hosts to a period");
  const size_t steps = schedule.steps.size();
  const int hostCount = static_cast<int>(hosts.hosts.size());
  // Each sending rank's messages to other hosts: (step, destination host, pieces per segment), in
  // step order, so that a walk's action finds its step's with one search.
  struct Outgoing {
    size_t step;
    int host;
    int64_t pieces;
  };
  std::map<int, std::vector<Outgoing>> outgoing;
  for (size_t s = 0; s < steps; ++s)
    for (const Transfer& t : schedule.steps[s].transfers)
      if (hosts.hostOf[t.src] != hosts.hostOf[t.dst])
        outgoing[t.src].push_back(Outgoing{s, hosts.hostOf[t.dst], std::max(1, t.endChunk - t.firstChunk)});
  // Enough segments for a diagonal that holds every step behind the first step's window, and never
  // more than a chunk is cut into (kMaxSegments): the most of any walk that runs.
  const int segments = static_cast<int>(std::min<size_t>(steps + kFirstStepWindow + 2, kMaxSegments));
  std::vector<int64_t> uplink(hostCount, 0), downlink(hostCount, 0);
  for (const auto& [rank, messages] : outgoing) {
    std::vector<int> destinations;  // the hosts this rank sends to, ascending; counted by index
    for (const Outgoing& m : messages) destinations.push_back(m.host);
    std::sort(destinations.begin(), destinations.end());
    destinations.erase(std::unique(destinations.begin(), destinations.end()), destinations.end());
    const auto indexOf = [&](int host) {
      return std::lower_bound(destinations.begin(), destinations.end(), host) - destinations.begin();
    };
    std::vector<int64_t> toHost(destinations.size(), 0), mostToHost(destinations.size(), 0);
    int64_t total = 0, mostTotal = 0;
    ScheduleWalker walker(steps, segments, ScheduleWalk::kBothDirections);
    WalkAction action;
    while (walker.next(action)) {
      const bool post = action.kind == WalkAction::Kind::kPostSends;
      if (!post && action.kind != WalkAction::Kind::kComplete) continue;
      auto m = std::lower_bound(messages.begin(), messages.end(), action.step,
                                [](const Outgoing& o, size_t step) { return o.step < step; });
      for (; m != messages.end() && m->step == action.step; ++m) {
        const int64_t delta = post ? m->pieces : -m->pieces;
        const auto i = indexOf(m->host);
        toHost[i] += delta;
        total += delta;
        mostToHost[i] = std::max(mostToHost[i], toHost[i]);
      }
      mostTotal = std::max(mostTotal, total);
    }
    uplink[hosts.hostOf[rank]] += mostTotal;
    for (size_t i = 0; i < destinations.size(); ++i) downlink[destinations[i]] += mostToHost[i];
  }
  int64_t most = 0;
  for (int h = 0; h < hostCount; ++h) most = std::max({most, uplink[h], slice ? 0 : downlink[h]});
  return most;
}

}  // namespace dtbench::comm
