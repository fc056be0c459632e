#include "experiments/predict/network_model.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "comm/topology/schedule_walk.h"
#include "common/machine_memory.h"
#include "common/usage_error.h"

namespace dtbench::predict {
namespace {

struct Message {
  int src = 0, dst = 0;          // the ranks of the whole world
  int srcItem = 0, dstItem = 0;  // whose items it counts in: src and dst, or mod the slice's period
  size_t step = 0;
  int segment = 0;
  int64_t bytes = 0;
  int links[2] = {0, 0};
  double latency = 0;
  double overhead = 0;  // its class's message overhead
  const comm::Transfer* transfer = nullptr;
  bool eager = false;         // leaves when the sender posts it, without the receiver's notice
  bool senderPosted = false;  // the sender has posted its send
  bool notified = false;      // the receiver's "ready" has reached the sender
  double remaining = 0;
  double rate = 0;
  size_t slot = 0;  // index in the active list while active
};

// What one rank sends another, in order: notices and data (see Simulation::push).
struct Entry {
  size_t message = 0;
  bool notice = false;  // the receiver's "ready" for `message`, else its data
};
struct Stream {
  bool transmitting = false;  // data at its head is moving
  std::deque<Entry> queue;
};

// A message of an item, and whether the item's rank receives it (else sends it): under a slice a
// rank can be both (rank 0 sends to rank P, which stands for rank 0 again).
struct ItemMessage {
  size_t id = 0;
  bool receives = false;
  bool ahead = false;  // a receive posted when the run starts (comm/topology/schedule_walk.h)
};

// The items of one rank that have messages, in (step, segment) order, index step * G + segment; an
// item without messages is done at once (kept implicit, so a rank of a large world holds only what
// it takes part in). The rank walks its items as comm::ScheduleWalker orders them.
struct RankItems {
  std::vector<std::pair<size_t, ItemMessage>> added;  // while the Schedule is read: (item, message)
  std::vector<size_t> items;                          // ascending
  std::vector<std::vector<ItemMessage>> messages;     // of items[k]
  std::vector<int> outstanding;                       // of items[k]
  std::optional<comm::ScheduleWalker> walker;
  size_t waiting = kNone;  // the position in `items` of the item the rank waits for, if any

  static constexpr size_t kNone = std::numeric_limits<size_t>::max();
  // The position in `items` of item `item`, or kNone.
  size_t find(size_t item) const {
    const auto it = std::lower_bound(items.begin(), items.end(), item);
    return it != items.end() && *it == item ? static_cast<size_t>(it - items.begin()) : kNone;
  }
};

void checkClass(const LinkClass& c, const char* which) {
  if (!(c.bytesPerSecond > 0) || !std::isfinite(c.bytesPerSecond))
    throw std::invalid_argument(std::string(which) + " bandwidth must be a positive number of bytes per second");
  if (!(c.latencyS >= 0) || !std::isfinite(c.latencyS))
    throw std::invalid_argument(std::string(which) + " latency must be a non-negative number of seconds");
  if (!(c.messageOverheadS >= 0) || !std::isfinite(c.messageOverheadS))
    throw std::invalid_argument(std::string(which) + " message overhead must be a non-negative number of seconds");
}

// What one simulated message holds while the walk runs (its Message, its items' entries, its stream
// entries), measured: a ring of 65,536 ranks over 64 ranks per node took 3.24 GB against 0.80 GB over 8.
constexpr double kBytesPerMessage = 340;

// The memory this process may use: the machine's, or less under `ulimit -v`; nullopt when unknown.
std::optional<double> memoryAllowedBytes() {
  std::optional<double> allowed = common::physicalMemoryBytes();
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    allowed = std::min(allowed.value_or(static_cast<double>(limit.rlim_cur)), static_cast<double>(limit.rlim_cur));
  return allowed;
}

class Simulation {
 public:
  Simulation(const comm::Schedule& schedule, const Network& network, int64_t numel, int64_t elementBytes,
             int64_t segmentBytes)
      : net_(network),
        world_(network.worldSize),
        period_(schedule.slicePeriod > 0 ? schedule.slicePeriod : network.worldSize),
        periodNodes_(period_ / network.ranksPerNode),
        walk_(comm::walkForHosts(network.nodes())) {
    segments_ = comm::segmentCount(schedule, numel, elementBytes, segmentBytes);
    steps_ = schedule.steps.size();
    double transfers = 0;
    for (const comm::Step& step : schedule.steps) transfers += static_cast<double>(step.transfers.size());
    checkSimulationFits(transfers * segments_, network, period_, schedule.topology);
    result_.bytesSent.assign(period_, 0);
    result_.nodeUp.assign(periodNodes_, 0);
    result_.nodeDown.assign(periodNodes_, 0);
    ranks_.resize(period_);
    issueFree_.assign(period_, 0);
    capacity_.assign(2 * period_ + 2 * periodNodes_, 0);
    load_.assign(capacity_.size(), 0);
    for (int r = 0; r < period_; ++r) capacity_[2 * r] = capacity_[2 * r + 1] = network.intra.bytesPerSecond;
    for (int k = 0; k < periodNodes_; ++k)
      capacity_[2 * period_ + 2 * k] = capacity_[2 * period_ + 2 * k + 1] =
          network.nodeBytesPerSecond.empty() ? network.inter.bytesPerSecond : network.nodeBytesPerSecond[k];
    for (size_t s = 0; s < steps_; ++s)
      for (const comm::Transfer& t : schedule.steps[s].transfers)
        for (int g = 0; g < segments_; ++g) addMessage(t, s, g, numel, schedule.chunks, elementBytes);
    for (RankItems& r : ranks_) {
      std::stable_sort(r.added.begin(), r.added.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [item, message] : r.added) {
        if (r.items.empty() || r.items.back() != item) {
          r.items.push_back(item);
          r.messages.emplace_back();
          r.outstanding.push_back(0);
        }
        r.messages.back().push_back(message);
        ++r.outstanding.back();
      }
      r.added = {};
      // A rank issues an item's messages by its peers' distance from it, (dst − src) mod N: every
      // rank in the same order, turned, so that a slice issues them as the whole does. The executor
      // posts them in the Schedule's order (a clique's by rank, from rank 0 up on every rank); the
      // two differ only where issuing costs something (the message overhead), in which peer waits.
      for (std::vector<ItemMessage>& item : r.messages)
        std::stable_sort(item.begin(), item.end(), [&](const ItemMessage& a, const ItemMessage& b) {
          const auto key = [&](const ItemMessage& m) {
            const Message& x = messages_[m.id];
            return std::make_pair(m.receives, ((x.dst - x.src) % world_ + world_) % world_);
          };
          return key(a) < key(b);
        });
      r.walker.emplace(steps_, segments_, walk_);
    }
    if (walk_ == comm::ScheduleWalk::kBothDirections) markReceivesAhead(schedule, numel);
  }

  SimulatedCollective run() {
    for (int r = 0; r < period_; ++r) advance(r);  // posts every rank's first items
    while (!starts_.empty() || !notices_.empty() || !active_.empty()) {
      double next = std::min(starts_.empty() ? kInf : starts_.top().first, notices_.empty() ? kInf : notices_.top().first);
      for (size_t id : active_) next = std::min(next, now_ + messages_[id].remaining / messages_[id].rate);
      progress(next);
      // Everything that happens at `next` (within rounding) happens together, then rates change once.
      const double slack = 1e-12 * std::max(1.0, next);
      std::vector<size_t> finished;
      for (size_t id : active_)
        if (messages_[id].remaining <= 1e-9 * static_cast<double>(messages_[id].bytes) ||
            now_ + messages_[id].remaining / messages_[id].rate <= next + slack)
          finished.push_back(id);
      for (size_t id : finished) finish(id);
      while (!notices_.empty() && notices_.top().first <= next + slack) {
        const size_t id = notices_.top().second;
        notices_.pop();
        messages_[id].notified = true;
        match(id);
      }
      while (!starts_.empty() && starts_.top().first <= next + slack) {
        const size_t id = starts_.top().second;
        starts_.pop();
        start(id);
      }
      updateRates();
    }
    result_.seconds = end_;
    result_.bandwidthS = std::min(moving_, end_);
    result_.latencyS = end_ - result_.bandwidthS;
    // A slice stands for every period of the world: the same bytes per rank and per node.
    const auto repeat = [](const std::vector<int64_t>& one, int times) {
      std::vector<int64_t> all;
      all.reserve(one.size() * static_cast<size_t>(times));
      for (int k = 0; k < times; ++k) all.insert(all.end(), one.begin(), one.end());
      return all;
    };
    const int periods = world_ / period_;
    result_.bytesSent = repeat(result_.bytesSent, periods);
    result_.nodeUp = repeat(result_.nodeUp, periods);
    result_.nodeDown = repeat(result_.nodeDown, periods);
    result_.messages *= periods;
    return std::move(result_);
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  void addMessage(const comm::Transfer& t, size_t s, int g, int64_t numel, int chunks, int64_t elementBytes) {
    int64_t elements = 0;
    for (int c = t.firstChunk; c < t.endChunk; ++c) elements += comm::segmentRange(numel, chunks, c, g, segments_).size();
    if (elements == 0) return;  // both sides skip empty pieces
    if (t.src >= period_) throw std::invalid_argument("a slice of period " + std::to_string(period_) +
                                                      " holds a transfer of rank " + std::to_string(t.src));
    Message m;
    m.src = t.src;
    m.dst = t.dst;
    m.srcItem = t.src;
    m.dstItem = t.dst % period_;
    m.step = s;
    m.segment = g;
    m.bytes = elements * elementBytes;
    m.remaining = static_cast<double>(m.bytes);
    m.transfer = &t;
    // Links of the slice's own ranks and nodes: a receiver outside it has the links of the one it
    // stands for (dst mod the period).
    const int a = net_.nodeOf(t.src), b = net_.nodeOf(t.dst);
    if (a == b) {
      m.links[0] = 2 * m.srcItem;
      m.links[1] = 2 * m.dstItem + 1;
      m.latency = net_.intra.latencyS;
      m.overhead = net_.intra.messageOverheadS;
      m.eager = m.bytes <= net_.intra.eagerBytes;
    } else {
      m.links[0] = 2 * period_ + 2 * (a % periodNodes_);
      m.links[1] = 2 * period_ + 2 * (b % periodNodes_) + 1;
      m.latency = net_.inter.latencyS;
      m.overhead = net_.inter.messageOverheadS;
      m.eager = m.bytes <= net_.inter.eagerBytes;
      result_.nodeUp[a % periodNodes_] += m.bytes;
      result_.nodeDown[b % periodNodes_] += m.bytes;
    }
    result_.bytesSent[m.srcItem] += m.bytes;
    ++result_.messages;
    const size_t id = messages_.size();
    messages_.push_back(m);
    const size_t item = s * segments_ + g;
    ranks_[m.srcItem].added.push_back({item, {id, false}});
    ranks_[m.dstItem].added.push_back({item, {id, true}});
  }

  // Posting receives: the rank sends each sender a "ready" notice (none for an eager message);
  // posting sends: the data may go once the receiver's notice has arrived (match). Notices and data
  // from one rank to another share one connection, in the order they were emitted: a notice waits
  // behind the data queued before it (so a receive posted while the same peer is still sending to
  // this rank is noticed only when that data is through).
  void postReceives(int rank, size_t position, bool ahead) {
    for (const ItemMessage& item : ranks_[rank].messages[position]) {
      if (!item.receives || item.ahead != ahead) continue;
      const Message& m = messages_[item.id];
      if (!m.eager) push(connection(m.dst, m.src), {item.id, true});
    }
  }
  void postSends(int rank, size_t position) {
    for (const ItemMessage& item : ranks_[rank].messages[position]) {
      if (item.receives) continue;
      messages_[item.id].senderPosted = true;
      match(item.id);
    }
  }

  void match(size_t id) {
    Message& m = messages_[id];
    if (m.senderPosted && (m.notified || m.eager)) push(pairKey(m), {id, false});
  }

  // The connection from a to b (key a·N + b) sends its queue in order: a notice leaves at once and
  // arrives `latency` later; data leaves when the data before it is through, `latency` after it was
  // queued on an idle connection, right behind its predecessor otherwise.
  void push(int64_t key, Entry entry) {
    Stream& stream = streams_[key];
    stream.queue.push_back(entry);
    pump(stream, false);
  }

  // A notice, and data on an idle connection, is issued by its rank (the receiver, the sender) when
  // that rank has issued the ones before it, `overhead` apart; its latency runs from there.
  void pump(Stream& stream, bool behind) {
    while (!stream.transmitting && !stream.queue.empty()) {
      const Entry e = stream.queue.front();
      stream.queue.pop_front();
      const Message& m = messages_[e.message];
      if (e.notice) {
        notices_.push({issue(m.dstItem, m.overhead) + m.latency, e.message});
      } else {
        stream.transmitting = true;
        starts_.push({behind ? now_ : issue(m.srcItem, m.overhead) + m.latency, e.message});
      }
    }
  }

  // When `rank` issues its next message, which then holds it for `overhead`.
  double issue(int rank, double overhead) {
    if (overhead <= 0) return now_;
    const double at = std::max(now_, issueFree_[rank]);
    issueFree_[rank] = at + overhead;
    return at;
  }

  // The connection from rank a to rank b; under a slice, the one of the pair shifted by whole periods
  // so that a lies in the slice (the pairs of one orbit behave alike).
  int64_t connection(int a, int b) const {
    const int shift = a - a % period_;
    return static_cast<int64_t>(a - shift) * world_ + ((b - shift) % world_ + world_) % world_;
  }
  int64_t pairKey(const Message& m) const { return connection(m.src, m.dst); }

  // Takes the rank's walk (comm::ScheduleWalker) as far as it goes: up to an item whose messages are
  // not all done, or the end.
  void advance(int rank) {
    RankItems& r = ranks_[rank];
    if (r.waiting != RankItems::kNone) {
      if (r.outstanding[r.waiting] > 0) return;
      r.waiting = RankItems::kNone;
      end_ = std::max(end_, now_);
    }
    comm::WalkAction action;
    while (r.walker->next(action)) {
      const size_t position = r.find(action.step * static_cast<size_t>(segments_) + action.segment);
      if (position == RankItems::kNone) continue;  // an item without messages
      switch (action.kind) {
        case comm::WalkAction::Kind::kPostReceivesAhead: postReceives(rank, position, true); break;
        case comm::WalkAction::Kind::kPostReceives: postReceives(rank, position, false); break;
        case comm::WalkAction::Kind::kPostSends: postSends(rank, position); break;
        case comm::WalkAction::Kind::kComplete:
          if (r.outstanding[position] > 0) {
            r.waiting = position;
            return;
          }
          end_ = std::max(end_, now_);
          break;
      }
    }
  }

  // Which receives each rank posts ahead: the executor's own plan of the rank decides
  // (comm::makeSchedulePlan), one rank at a time.
  void markReceivesAhead(const comm::Schedule& schedule, int64_t numel) {
    // Under a slice, a transfer to dst beyond the period is received by dst mod the period, which
    // sees it, shifted by the whole periods between them, as coming from src shifted alike: the
    // rank's own view of the world. The plan reads a copy of the Schedule that adds those shifted
    // transfers after each step's own (incoming[s][i]: where transfer i of step s is received).
    comm::Schedule local;
    const comm::Schedule* planned = &schedule;
    std::vector<std::vector<size_t>> incoming;  // under a slice only; else transfer i itself
    if (period_ != world_) {
      local = schedule;
      incoming.resize(steps_);
      for (size_t s = 0; s < steps_; ++s)
        for (size_t i = 0; i < schedule.steps[s].transfers.size(); ++i) {
          incoming[s].push_back(i);
          comm::Transfer t = schedule.steps[s].transfers[i];
          if (t.dst < period_) continue;
          const int shift = t.dst - t.dst % period_;
          t.dst -= shift;
          t.src = ((t.src - shift) % world_ + world_) % world_;
          // The chunks turn with the ranks: a sliceable Schedule's chunks are spread evenly over
          // them (ring and clique one per rank, hierarchical one per host).
          const int chunks = schedule.chunks, width = t.endChunk - t.firstChunk;
          if (width < chunks) {
            const int turn = static_cast<int>(static_cast<int64_t>(shift) * chunks / world_);
            t.firstChunk = ((t.firstChunk - turn) % chunks + chunks) % chunks;
            t.endChunk = t.firstChunk + width;
            if (t.endChunk > chunks)
              throw std::logic_error("a slice of '" + schedule.topology + "' has a transfer whose chunks wrap when turned");
          }
          incoming[s][i] = local.steps[s].transfers.size();
          local.steps[s].transfers.push_back(t);
        }
      planned = &local;
    }
    std::vector<std::vector<std::vector<const comm::Transfer*>>> mine(
        period_, std::vector<std::vector<const comm::Transfer*>>(steps_));
    for (size_t s = 0; s < steps_; ++s)
      for (const comm::Transfer& t : planned->steps[s].transfers) {
        if (t.src < period_) mine[t.src][s].push_back(&t);
        if (t.dst < period_ && t.dst != t.src) mine[t.dst][s].push_back(&t);
      }
    for (int rank = 0; rank < period_; ++rank) {
      RankItems& r = ranks_[rank];
      if (r.items.empty()) continue;
      const comm::SchedulePlan plan = comm::makeSchedulePlan(*planned, mine[rank], rank, numel, segments_, walk_);
      mine[rank] = {};
      const size_t G = static_cast<size_t>(segments_);
      std::unordered_set<const comm::Transfer*> ahead;  // of the item at hand: transfers received ahead
      for (size_t k = 0; k < r.items.size(); ++k) {
        const size_t s = r.items[k] / G;
        ahead.clear();
        for (const comm::PlannedMessage& in : plan.items[s][r.items[k] % G].incoming)
          if (in.ahead) ahead.insert(in.transfer);
        if (ahead.empty()) continue;
        for (ItemMessage& message : r.messages[k]) {
          if (!message.receives) continue;
          const size_t i = static_cast<size_t>(messages_[message.id].transfer - schedule.steps[s].transfers.data());
          message.ahead = ahead.count(&planned->steps[s].transfers[incoming.empty() ? i : incoming[s][i]]) > 0;
        }
      }
    }
  }

  void progress(double to) {
    const double dt = to - now_;
    if (!active_.empty()) moving_ += dt;
    for (size_t id : active_) messages_[id].remaining -= messages_[id].rate * dt;
    now_ = to;
  }

  void start(size_t id) {
    Message& m = messages_[id];
    m.slot = active_.size();
    active_.push_back(id);
    for (int l : m.links) ++load_[l];
  }

  void finish(size_t id) {
    Message& m = messages_[id];
    m.remaining = 0;
    for (int l : m.links) --load_[l];
    const size_t last = active_.back();
    active_[m.slot] = last;
    messages_[last].slot = m.slot;
    active_.pop_back();
    Stream& stream = streams_[pairKey(m)];
    stream.transmitting = false;
    pump(stream, true);
    const size_t item = m.step * segments_ + m.segment;
    for (int rank : {m.srcItem, m.dstItem}) {
      RankItems& r = ranks_[rank];
      --r.outstanding[r.find(item)];
    }
    advance(m.srcItem);
    advance(m.dstItem);
  }

  void updateRates() {
    for (size_t id : active_) {
      Message& m = messages_[id];
      m.rate = std::min(capacity_[m.links[0]] / load_[m.links[0]], capacity_[m.links[1]] / load_[m.links[1]]);
    }
  }


  const Network& net_;
  int world_;
  int period_;       // ranks simulated: the world, or a slice's period
  int periodNodes_;  // their nodes
  comm::ScheduleWalk walk_;
  std::unordered_map<int64_t, Stream> streams_;
  int segments_ = 1;
  size_t steps_ = 0;
  std::vector<Message> messages_;
  std::vector<RankItems> ranks_;
  std::vector<double> issueFree_;  // per rank: when it may issue its next message
  std::vector<double> capacity_;
  std::vector<int> load_;
  std::vector<size_t> active_;
  using Events = std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, std::greater<>>;
  Events starts_;   // data that starts moving
  Events notices_;  // notices that arrive
  double now_ = 0, end_ = 0;
  double moving_ = 0;  // the time in which some message's bytes moved: the bandwidth part
  SimulatedCollective result_;
};

}  // namespace

void checkSimulationFits(double messages, const Network& network, int simulatedRanks, const std::string& topology) {
  const double needed = messages * kBytesPerMessage;
  const std::optional<double> allowed = memoryAllowedBytes();
  if (!allowed || needed <= 0.7 * *allowed) return;
  // Only what lowers this simulation's messages: a large world of ring, clique or hierarchical is
  // simulated as one node's ranks, so fewer of them; a ring's or clique's rank sends 2(N − 1),
  // hierarchical's 2(R − 1) + 2(nodes − 1), fewer only across nodes. The trees and the star are
  // simulated whole, whatever the node.
  const bool rootless = topology == "ring" || topology == "clique" || topology == "hierarchical";
  std::string advice = "predict a smaller --world";
  if (rootless && network.ranksPerNode > 1)
    advice += ", fewer ranks per node (the hardware file's ranks_per_node: a large world is simulated as one "
              "node's ranks)";
  if ((topology == "ring" || topology == "clique") && network.nodes() > 1)
    advice += ", or --topology hierarchical, whose ranks send 2(R - 1) + 2(nodes - 1) messages, not 2(N - 1)";
  throw common::UsageError(
      "predicting a collective over " + std::to_string(network.worldSize) + " ranks at " +
      std::to_string(network.ranksPerNode) + " per node simulates " + std::to_string(simulatedRanks) + " ranks' " +
      std::to_string(static_cast<int64_t>(messages)) + " messages (" + topology + "), about " + common::gibText(needed) +
      ", more than the " + common::gibText(*allowed) + " this process may use (the machine's memory, or ulimit -v): " +
      advice);
}

SimulatedCollective simulateSchedule(const comm::Schedule& schedule, const Network& network, int64_t numel,
                                     int64_t elementBytes, int64_t segmentBytes) {
  if (network.worldSize < 1 || network.ranksPerNode < 1 || network.worldSize % network.ranksPerNode != 0)
    throw std::invalid_argument("ranks per node (" + std::to_string(network.ranksPerNode) + ") must divide the world (" +
                                std::to_string(network.worldSize) + ")");
  if (schedule.worldSize != network.worldSize)
    throw std::invalid_argument("schedule '" + schedule.topology + "' is for " + std::to_string(schedule.worldSize) +
                                " ranks, the network has " + std::to_string(network.worldSize));
  if (numel < 0 || elementBytes < 1) throw std::invalid_argument("a collective needs numel >= 0 and elementBytes >= 1");
  if (network.ranksPerNode > 1) checkClass(network.intra, "intra-node");
  if (network.nodes() > 1) checkClass(network.inter, "inter-node");
  if (!network.nodeBytesPerSecond.empty()) {
    if (static_cast<int>(network.nodeBytesPerSecond.size()) != network.nodes())
      throw std::invalid_argument("one link bandwidth per node is needed, got " +
                                  std::to_string(network.nodeBytesPerSecond.size()) + " for " +
                                  std::to_string(network.nodes()) + " nodes");
    for (double b : network.nodeBytesPerSecond) checkClass({b, 0}, "node link");
  }
  if (schedule.slicePeriod > 0) {
    if (network.worldSize % schedule.slicePeriod != 0 || schedule.slicePeriod % network.ranksPerNode != 0)
      throw std::invalid_argument("a slice's period (" + std::to_string(schedule.slicePeriod) +
                                  ") must be whole nodes and divide the world (" + std::to_string(network.worldSize) + ")");
    if (!network.nodeBytesPerSecond.empty())
      throw std::invalid_argument("a slice stands for the whole world only on links of one rate: simulate the whole "
                                  "Schedule when node links differ");
  }
  if (schedule.steps.empty() || numel == 0) {
    SimulatedCollective none;
    none.bytesSent.assign(network.worldSize, 0);
    none.nodeUp.assign(network.nodes(), 0);
    none.nodeDown.assign(network.nodes(), 0);
    return none;
  }
  return Simulation(schedule, network, numel, elementBytes, segmentBytes).run();
}

comm::Schedule binomialBroadcastSchedule(int worldSize) {
  comm::Schedule s;
  s.topology = "binomial-broadcast";
  s.worldSize = worldSize;
  s.chunks = 1;
  for (int have = 1; have < worldSize; have *= 2) {
    comm::Step step;
    for (int r = 0; r < have && r + have < worldSize; ++r) step.transfers.push_back({r, r + have, 0, 1, false});
    s.steps.push_back(std::move(step));
  }
  return s;
}

comm::Schedule pairExchangeSchedule(const std::vector<int>& partner) {
  comm::Schedule s;
  s.topology = "pair-exchange";
  s.worldSize = static_cast<int>(partner.size());
  s.chunks = 1;
  comm::Step step;
  for (int r = 0; r < s.worldSize; ++r)
    if (partner[r] >= 0) step.transfers.push_back({r, partner[r], 0, 1, false});
  if (!step.transfers.empty()) s.steps.push_back(std::move(step));
  return s;
}

}  // namespace dtbench::predict
