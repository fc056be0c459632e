#include "experiments/predict/network_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>

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
  bool senderPosted = false;  // the sender has posted its item
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
};

// The items of one rank that have messages, in (step, segment) order, index step * G + segment; an
// item without messages is done as soon as the items before it are (kept implicit, so a rank of a
// large world holds only what it takes part in).
struct RankItems {
  std::vector<std::pair<size_t, ItemMessage>> added;  // while the Schedule is read: (item, message)
  std::vector<size_t> items;                          // ascending
  std::vector<std::vector<ItemMessage>> messages;     // of items[k]
  std::vector<int> outstanding;                       // of items[k]
  size_t next = 0;    // first of `items` not yet done
  size_t posted = 0;  // first of `items` not yet posted
};

void checkClass(const LinkClass& c, const char* which) {
  if (!(c.bytesPerSecond > 0) || !std::isfinite(c.bytesPerSecond))
    throw std::invalid_argument(std::string(which) + " bandwidth must be a positive number of bytes per second");
  if (!(c.latencyS >= 0) || !std::isfinite(c.latencyS))
    throw std::invalid_argument(std::string(which) + " latency must be a non-negative number of seconds");
}

class Simulation {
 public:
  Simulation(const comm::Schedule& schedule, const Network& network, int64_t numel, int64_t elementBytes,
             int64_t segmentBytes)
      : net_(network),
        world_(network.worldSize),
        period_(schedule.slicePeriod > 0 ? schedule.slicePeriod : network.worldSize),
        periodNodes_(period_ / network.ranksPerNode) {
    segments_ = comm::segmentCount(schedule, numel, elementBytes, segmentBytes);
    steps_ = schedule.steps.size();
    result_.bytesSent.assign(period_, 0);
    result_.nodeUp.assign(periodNodes_, 0);
    result_.nodeDown.assign(periodNodes_, 0);
    ranks_.resize(period_);
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
    }
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
    // Links of the slice's own ranks and nodes: a receiver outside it has the links of the one it
    // stands for (dst mod the period).
    const int a = net_.nodeOf(t.src), b = net_.nodeOf(t.dst);
    if (a == b) {
      m.links[0] = 2 * m.srcItem;
      m.links[1] = 2 * m.dstItem + 1;
      m.latency = net_.intra.latencyS;
    } else {
      m.links[0] = 2 * period_ + 2 * (a % periodNodes_);
      m.links[1] = 2 * period_ + 2 * (b % periodNodes_) + 1;
      m.latency = net_.inter.latencyS;
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

  // Posting an item: for every message it receives, the rank sends the sender a "ready" notice; for
  // every message it sends, the data may go once the receiver's notice has arrived (match). Notices
  // and data from one rank to another share one connection, in the order they were emitted: a notice
  // waits behind the data queued before it (so a receive posted while the same peer is still
  // sending to this rank is noticed only when that data is through).
  void post(int rank, size_t position) {
    for (const ItemMessage& item : ranks_[rank].messages[position]) {
      Message& m = messages_[item.id];
      if (item.receives) {
        push(connection(m.dst, m.src), {item.id, true});
      } else {
        m.senderPosted = true;
        match(item.id);
      }
    }
  }

  void match(size_t id) {
    Message& m = messages_[id];
    if (m.senderPosted && m.notified) push(pairKey(m), {id, false});
  }

  // The connection from a to b (key a·N + b) sends its queue in order: a notice leaves at once and
  // arrives `latency` later; data leaves when the data before it is through, `latency` after it was
  // queued on an idle connection, right behind its predecessor otherwise.
  void push(int64_t key, Entry entry) {
    Stream& stream = streams_[key];
    stream.queue.push_back(entry);
    pump(stream, false);
  }

  void pump(Stream& stream, bool behind) {
    while (!stream.transmitting && !stream.queue.empty()) {
      const Entry e = stream.queue.front();
      stream.queue.pop_front();
      const Message& m = messages_[e.message];
      if (e.notice) {
        notices_.push({now_ + m.latency, e.message});
      } else {
        stream.transmitting = true;
        starts_.push({now_ + (behind ? 0 : m.latency), e.message});
      }
    }
  }

  // The connection from rank a to rank b; under a slice, the one of the pair shifted by whole periods
  // so that a lies in the slice (the pairs of one orbit behave alike).
  int64_t connection(int a, int b) const {
    const int shift = a - a % period_;
    return static_cast<int64_t>(a - shift) * world_ + ((b - shift) % world_ + world_) % world_;
  }
  int64_t pairKey(const Message& m) const { return connection(m.src, m.dst); }

  // Completes the rank's items in order while they have nothing outstanding, and posts every item
  // (step, segment) whose predecessor (step - 1, segment) is now done: all items up to the first
  // one still outstanding are (those without messages at once).
  void advance(int rank) {
    RankItems& r = ranks_[rank];
    while (r.next < r.items.size() && r.outstanding[r.next] == 0) {
      ++r.next;
      end_ = std::max(end_, now_);
    }
    const size_t doneBelow = r.next < r.items.size() ? r.items[r.next] : std::numeric_limits<size_t>::max();
    const size_t g = static_cast<size_t>(segments_);
    while (r.posted < r.items.size() && (r.items[r.posted] < g || r.items[r.posted] - g < doneBelow)) post(rank, r.posted++);
  }

  void progress(double to) {
    const double dt = to - now_;
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
      const size_t k = static_cast<size_t>(std::lower_bound(r.items.begin(), r.items.end(), item) - r.items.begin());
      --r.outstanding[k];
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
  std::unordered_map<int64_t, Stream> streams_;
  int segments_ = 1;
  size_t steps_ = 0;
  std::vector<Message> messages_;
  std::vector<RankItems> ranks_;
  std::vector<double> capacity_;
  std::vector<int> load_;
  std::vector<size_t> active_;
  using Events = std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, std::greater<>>;
  Events starts_;   // data that starts moving
  Events notices_;  // notices that arrive
  double now_ = 0, end_ = 0;
  SimulatedCollective result_;
};

}  // namespace

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
