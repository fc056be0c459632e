#include "experiments/capture/tcp_streams.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include <netinet/in.h>

namespace dtbench::capture {
namespace {

constexpr int kTimestampOptionBytes = 12;  // the option (10) padded to a word

int flowProtocol(const Packet& packet) {
  if (packet.kind == PacketKind::kTcp) return IPPROTO_TCP;
  if (packet.kind == PacketKind::kUdp) return IPPROTO_UDP;
  if (packet.protocol == IPPROTO_TCP || packet.protocol == IPPROTO_UDP) return -1;
  return packet.protocol;
}

}  // namespace

bool FlowKey::operator<(const FlowKey& o) const {
  return std::tie(src, dst, srcPort, dstPort, protocol, scope) <
         std::tie(o.src, o.dst, o.srcPort, o.dstPort, o.protocol, o.scope);
}

bool FlowKey::operator==(const FlowKey& o) const {
  return std::tie(src, dst, srcPort, dstPort, protocol, scope) ==
         std::tie(o.src, o.dst, o.srcPort, o.dstPort, o.protocol, o.scope);
}

std::string flowProtocolName(int protocol) {
  switch (protocol) {
    case -1: return "other";
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return std::to_string(protocol);
  }
}

int FlowTable::add(const Packet& packet, const std::string& scope) {
  lastWireFrames_ = 1;
  lastWireBytes_ = packet.frameLength;
  if (packet.ipVersion == 0 || packet.src.empty()) return -1;
  FlowKey key{packet.src, packet.dst, packet.srcPort, packet.dstPort, flowProtocol(packet), scope};
  if (key.protocol != IPPROTO_TCP && key.protocol != IPPROTO_UDP) key.srcPort = key.dstPort = 0;
  auto [at, isNew] = ids_.try_emplace(key, static_cast<int>(flows_.size()));
  if (isNew) {
    Flow flow;
    flow.id = at->second;
    flow.key = key;
    flow.first_s = packet.t_s;
    flows_.push_back(flow);
    states_.emplace_back();
  }
  Flow& flow = flows_[static_cast<size_t>(at->second)];
  flow.last_s = std::max(flow.last_s, packet.t_s);
  flow.first_s = std::min(flow.first_s, packet.t_s);
  ++flow.packets;
  flow.frameBytes += packet.frameLength;
  if (packet.kind == PacketKind::kTcp || packet.kind == PacketKind::kUdp) flow.payloadBytes += packet.payloadLength;
  if (packet.kind == PacketKind::kTcp) addTcp(packet, flow, states_[static_cast<size_t>(at->second)]);
  flow.wireFrames += lastWireFrames_;
  flow.wireBytes += lastWireBytes_;
  return flow.id;
}

void FlowTable::addTcp(const Packet& packet, Flow& flow, StreamState& state) {
  if (packet.syn()) {
    state.synSeen = true;
    state.synMss = packet.mss;
    state.synTimestamps = packet.tcpTimestamps;
    state.haveOrigin = true;
    state.topSeq = packet.seq + 1;
    state.topOffset = 0;
  }
  flow.mss = mssOf(flow);
  const auto reverse = ids_.find(flow.key.reversed());
  if (reverse != ids_.end()) flows_[static_cast<size_t>(reverse->second)].mss = mssOf(flows_[static_cast<size_t>(reverse->second)]);

  if (packet.hasAck()) {
    const bool pure = packet.payloadLength == 0 && !packet.syn() && !packet.fin() && !packet.rst();
    const bool duplicate = pure && state.haveAck && packet.ack == state.lastAck && packet.window == state.lastWindow;
    if (pure && (duplicate || packet.sack)) state.ackEvents.push_back({packet.t_s, packet.ack, duplicate, packet.sack});
    state.haveAck = true;
    state.lastAck = packet.ack;
    state.lastWindow = packet.window;
  }

  const int64_t payload = packet.payloadLength;
  if (payload <= 0) return;
  const int64_t frames = (payload + flow.mss - 1) / flow.mss;
  const int64_t headers = std::max<int64_t>(0, packet.frameLength - payload);
  lastWireFrames_ = frames;
  lastWireBytes_ = payload + frames * headers;

  if (!state.haveOrigin) {
    state.haveOrigin = true;
    state.topSeq = packet.seq;
    state.topOffset = 0;
  }
  const int64_t offset = state.topOffset + static_cast<int32_t>(packet.seq - state.topSeq);
  if (offset > state.topOffset) {
    state.topOffset = offset;
    state.topSeq = packet.seq;
  }
  const int64_t begin = offset, end = offset + payload;

  // Overlap with the ranges already sent; the uncovered parts become sent ranges of their own.
  int64_t overlap = 0;
  double firstSent_s = packet.t_s;
  bool anyOverlap = false;
  std::vector<std::pair<int64_t, int64_t>> gaps;
  int64_t cursor = begin;
  auto it = state.sent.upper_bound(begin);
  if (it != state.sent.begin() && std::prev(it)->second.end > begin) --it;
  for (; it != state.sent.end() && it->first < end; ++it) {
    const int64_t from = std::max(begin, it->first), to = std::min(end, it->second.end);
    if (to <= from) continue;
    if (!anyOverlap) firstSent_s = it->second.t_s;
    anyOverlap = true;
    overlap += to - from;
    if (it->first > cursor) gaps.emplace_back(cursor, it->first);
    cursor = std::max(cursor, it->second.end);
  }
  if (cursor < end) gaps.emplace_back(cursor, end);
  for (const auto& [from, to] : gaps) state.sent.emplace(from, SentPiece{to, packet.t_s});

  flow.segments.push_back({packet.t_s, offset, payload, overlap});
  flow.streamBytes += payload - overlap;
  if (overlap == 0) return;
  ++flow.retransmittedPackets;
  flow.retransmittedBytes += overlap;
  const bool fast = fastRecovery(flow, packet.seq, firstSent_s, packet.t_s);
  const double since = packet.t_s - firstSent_s;
  // No retransmission timeout fires sooner than the minimum RTO after the first transmission; what
  // comes sooner without a duplicate ACK is one of the sender's early timers (RACK, tail-loss probe).
  const char* kind = fast ? "fast" : since >= kMinRto_s ? "timeout" : "probe";
  if (!fast && since >= kMinRto_s) ++flow.timeouts;
  retransmissions_.push_back({packet.t_s, flow.id, offset, overlap, kind, since});
}

int FlowTable::mssOf(const Flow& flow) const {
  const StreamState& own = states_[static_cast<size_t>(flow.id)];
  const StreamState* syn = nullptr;
  const auto reverse = ids_.find(flow.key.reversed());
  if (reverse != ids_.end() && states_[static_cast<size_t>(reverse->second)].synSeen &&
      states_[static_cast<size_t>(reverse->second)].synMss > 0)
    syn = &states_[static_cast<size_t>(reverse->second)];
  else if (own.synSeen && own.synMss > 0)
    syn = &own;
  if (syn == nullptr) return kDefaultMss;
  return std::max(1, syn->synMss - (syn->synTimestamps ? kTimestampOptionBytes : 0));
}

bool FlowTable::fastRecovery(const Flow& flow, uint32_t seq, double from_s, double to_s) const {
  const auto reverse = ids_.find(flow.key.reversed());
  if (reverse == ids_.end()) return false;
  const std::vector<AckEvent>& events = states_[static_cast<size_t>(reverse->second)].ackEvents;
  auto it = std::upper_bound(events.begin(), events.end(), from_s,
                             [](double t, const AckEvent& e) { return t < e.t_s; });
  for (; it != events.end() && it->t_s <= to_s; ++it)
    if (it->sack || (it->duplicate && it->ack == seq)) return true;
  return false;
}

}  // namespace dtbench::capture
