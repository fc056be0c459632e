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
  int src = 0, dst = 0;
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

// Items of one rank in (step, segment) order: the messages each waits for.
struct RankItems {
  std::vector<std::vector<size_t>> messages;  // [step * G + segment]
  std::vector<int> outstanding;
  size_t next = 0;  // first item not yet done
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
      : net_(network), world_(network.worldSize) {
    segments_ = comm::segmentCount(schedule, numel, elementBytes, segmentBytes);
    steps_ = schedule.steps.size();
    result_.bytesSent.assign(world_, 0);
    result_.nodeUp.assign(network.nodes(), 0);
    result_.nodeDown.assign(network.nodes(), 0);
    ranks_.resize(world_);
    for (RankItems& r : ranks_) {
      r.messages.resize(steps_ * segments_);
      r.outstanding.assign(steps_ * segments_, 0);
    }
    capacity_.assign(2 * world_ + 2 * network.nodes(), 0);
    load_.assign(capacity_.size(), 0);
    for (int r = 0; r < world_; ++r) capacity_[2 * r] = capacity_[2 * r + 1] = network.intra.bytesPerSecond;
    for (int k = 0; k < network.nodes(); ++k)
      capacity_[2 * world_ + 2 * k] = capacity_[2 * world_ + 2 * k + 1] =
          network.nodeBytesPerSecond.empty() ? network.inter.bytesPerSecond : network.nodeBytesPerSecond[k];
    for (size_t s = 0; s < steps_; ++s)
      for (const comm::Transfer& t : schedule.steps[s].transfers)
        for (int g = 0; g < segments_; ++g) addMessage(t, s, g, numel, schedule.chunks, elementBytes);
  }

  SimulatedCollective run() {
    for (int r = 0; r < world_; ++r)
      for (int g = 0; g < segments_; ++g) post(r, 0, g);
    for (int r = 0; r < world_; ++r) advance(r);
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
    return std::move(result_);
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  void addMessage(const comm::Transfer& t, size_t s, int g, int64_t numel, int chunks, int64_t elementBytes) {
    int64_t elements = 0;
    for (int c = t.firstChunk; c < t.endChunk; ++c) elements += comm::segmentRange(numel, chunks, c, g, segments_).size();
    if (elements == 0) return;  // both sides skip empty pieces
    Message m;
    m.src = t.src;
    m.dst = t.dst;
    m.step = s;
    m.segment = g;
    m.bytes = elements * elementBytes;
    m.remaining = static_cast<double>(m.bytes);
    const int a = net_.nodeOf(t.src), b = net_.nodeOf(t.dst);
    if (a == b) {
      m.links[0] = 2 * t.src;
      m.links[1] = 2 * t.dst + 1;
      m.latency = net_.intra.latencyS;
    } else {
      m.links[0] = 2 * world_ + 2 * a;
      m.links[1] = 2 * world_ + 2 * b + 1;
      m.latency = net_.inter.latencyS;
      result_.nodeUp[a] += m.bytes;
      result_.nodeDown[b] += m.bytes;
    }
    result_.bytesSent[t.src] += m.bytes;
    ++result_.messages;
    const size_t id = messages_.size();
    messages_.push_back(m);
    const size_t item = s * segments_ + g;
    for (int rank : {t.src, t.dst}) {
      ranks_[rank].messages[item].push_back(id);
      ++ranks_[rank].outstanding[item];
    }
  }

  // Posting an item: for every message it receives, the rank sends the sender a "ready" notice; for
  // every message it sends, the data may go once the receiver's notice has arrived (match). Notices
  // and data from one rank to another share one connection, in the order they were emitted: a notice
  // waits behind the data queued before it (so a receive posted while the same peer is still
  // sending to this rank is noticed only when that data is through).
  void post(int rank, size_t s, int g) {
    for (size_t id : ranks_[rank].messages[s * segments_ + g]) {
      Message& m = messages_[id];
      if (m.dst == rank) {
        push(static_cast<int64_t>(m.dst) * world_ + m.src, {id, true});
      } else {
        m.senderPosted = true;
        match(id);
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

  int64_t pairKey(const Message& m) const { return static_cast<int64_t>(m.src) * world_ + m.dst; }

  // Completes the rank's items in order while they have nothing outstanding, posting their successors.
  void advance(int rank) {
    RankItems& r = ranks_[rank];
    while (r.next < r.outstanding.size() && r.outstanding[r.next] == 0) {
      const size_t s = r.next / segments_;
      const int g = static_cast<int>(r.next % segments_);
      ++r.next;
      end_ = std::max(end_, now_);
      if (s + 1 < steps_) post(rank, s + 1, g);
    }
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
    --ranks_[m.src].outstanding[item];
    --ranks_[m.dst].outstanding[item];
    advance(m.src);
    advance(m.dst);
  }

  void updateRates() {
    for (size_t id : active_) {
      Message& m = messages_[id];
      m.rate = std::min(capacity_[m.links[0]] / load_[m.links[0]], capacity_[m.links[1]] / load_[m.links[1]]);
    }
  }


  const Network& net_;
  int world_;
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
