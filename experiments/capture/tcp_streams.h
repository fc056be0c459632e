#pragma once
// Directed flows and their TCP streams: the packets counted on the wire (wire_capture.h), grouped
// by 5-tuple, with each TCP flow's payload placed in its byte stream so that retransmissions show.
//
// Contract
//   FlowTable::add(packet, scope)  one packet counted on the wire, in capture order (time order across
//                 the capture points); `scope` is FlowKey::scope ("" or "<node>:lo"). Returns its flow's id (0, 1, ... in order of first packet) or −1 for
//                 a frame without IP addresses (ARP, non-IP, a cut IP header), which belongs to no
//                 flow. A TCP or UDP header that did not decode puts the packet in a flow of
//                 protocol −1 ("other") between the two addresses, ports 0.
//   Stream offsets: a TCP flow's origin is its SYN's sequence number + 1, or, when the SYN was not
//                 captured, the sequence number of its first segment. Offsets are unwrapped modulo
//                 2^32 relative to the highest offset seen so far, so a stream may pass 4 GiB and its
//                 sequence numbers may wrap.
//   Retransmissions: a payload-carrying segment whose range [offset, offset + payload) overlaps
//                 bytes already sent on the flow is a retransmission; only the overlapping bytes are
//                 retransmitted bytes (a partial overlap sends the rest for the first time). Its kind is
//                 `fast` when, after the first transmission of its first retransmitted byte and up to
//                 itself, the reverse flow carried a duplicate ACK for its start (a segment without
//                 payload, SYN, FIN or RST whose ack number equals the segment's sequence number and
//                 repeats the reverse flow's previous ack number and window) or any ACK with SACK
//                 blocks; else `timeout` when it came at least kMinRto_s (Linux's TCP_RTO_MIN, 200 ms)
//                 after that first transmission, since no retransmission timeout fires sooner; else
//                 `probe` (one of the sender's early timers: RACK's reordering window or a tail-loss
//                 probe, which on links with tens of microseconds of round trip fire within
//                 microseconds). Flow::timeouts counts the `timeout` ones. since_first_s = its time −
//                 that first transmission's.
//   MSS and wire frames: a flow's mss is the payload one wire frame carries: the MSS option of the
//                 reverse flow's SYN (the receiver's), else of its own, less 12 when that SYN carried
//                 the timestamp option; 1448 when no SYN was captured. A TCP packet with payload p is
//                 ceil(p / mss) wire frames (a super-packet before segmentation), each with the
//                 captured frame's headers (frame length − p); every other packet is one wire frame of
//                 its frame length. add() returns these in lastWireFrames()/lastWireBytes().
//   Cost: O(log n) per packet in the segments already sent on its flow.
//
// Worked example (docs/wire.md): SYN seq 1000 (MSS 1460, timestamps) answered by a SYN-ACK with the
// same options; segments of 1448 bytes at seq 1001, 2449, 3897 → offsets 0, 1448, 2896. The segment
// at 2449 is lost; the receiver ACKs 2449 for the first and again for the third (a duplicate); the
// sender resends 2449: a retransmission of 1448 bytes at offset 1448, kind `fast`.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiments/capture/packet.h"

namespace dtbench::capture {

inline constexpr int kDefaultMss = 1448;
inline constexpr double kMinRto_s = 0.2;  // Linux's TCP_RTO_MIN

struct FlowKey {
  std::string src, dst;
  uint16_t srcPort = 0, dstPort = 0;
  int protocol = 0;  // IPPROTO_TCP, IPPROTO_UDP, another IP protocol; −1 a TCP/UDP header that did not decode
  std::string scope;  // "" on the links; "<node>:lo" on a node's loopback, so that two nodes' 127.0.0.1 stay apart

  bool operator<(const FlowKey& other) const;
  bool operator==(const FlowKey& other) const;
  FlowKey reversed() const { return {dst, src, dstPort, srcPort, protocol, scope}; }
};

// "tcp", "udp", "icmp", "icmpv6", "other" (−1), else the IP protocol number.
std::string flowProtocolName(int protocol);

struct StreamSegment {
  double t_s = 0;
  int64_t offset = 0;              // relative to the stream's origin (see above)
  int64_t bytes = 0;               // TCP payload
  int64_t retransmittedBytes = 0;  // of those, bytes sent before
};

struct Flow {
  int id = 0;                        // the `flow` column
  FlowKey key;
  std::string srcHost, dstHost;      // node names from the capture points' addresses ("" unknown)
  int srcRank = -1, dstRank = -1;    // filled by the reconciliation
  std::string cls = "other";         // backend, store, launcher, slurm, other (the reconciliation)
  double first_s = 0, last_s = 0;
  int64_t packets = 0, frameBytes = 0, payloadBytes = 0, streamBytes = 0, retransmittedPackets = 0,
          retransmittedBytes = 0, wireFrames = 0, wireBytes = 0;
  int timeouts = 0;
  int mss = kDefaultMss;
  std::vector<StreamSegment> segments;  // TCP payload-carrying segments, in capture order
};

struct Retransmission {
  double t_s = 0;
  int flow = 0;
  int64_t seqOffset = 0;   // the segment's offset
  int64_t bytes = 0;       // its retransmitted bytes
  std::string kind;        // "fast", "probe" or "timeout"
  double sinceFirst_s = 0;
};

class FlowTable {
 public:
  int add(const Packet& packet, const std::string& scope = "");
  int64_t lastWireFrames() const { return lastWireFrames_; }
  int64_t lastWireBytes() const { return lastWireBytes_; }

  const std::vector<Flow>& flows() const { return flows_; }
  std::vector<Flow>& flows() { return flows_; }
  const std::vector<Retransmission>& retransmissions() const { return retransmissions_; }

 private:
  struct SentPiece {
    int64_t end = 0;
    double t_s = 0;  // first transmission
  };
  struct AckEvent {  // an ACK of the flow that can make a retransmission of the reverse flow `fast`
    double t_s = 0;
    uint32_t ack = 0;
    bool duplicate = false;
    bool sack = false;
  };
  struct StreamState {
    bool haveOrigin = false;
    uint32_t topSeq = 0;  // the sequence number of topOffset
    int64_t topOffset = 0;
    int synMss = 0;
    bool synTimestamps = false, synSeen = false;
    bool haveAck = false;
    uint32_t lastAck = 0;
    uint16_t lastWindow = 0;
    std::map<int64_t, SentPiece> sent;  // disjoint ranges by their start
    std::vector<AckEvent> ackEvents;    // in time order
  };

  void addTcp(const Packet& packet, Flow& flow, StreamState& state);
  int mssOf(const Flow& flow) const;
  bool fastRecovery(const Flow& flow, uint32_t seq, double from_s, double to_s) const;

  std::vector<Flow> flows_;
  std::vector<StreamState> states_;
  std::map<FlowKey, int> ids_;
  std::vector<Retransmission> retransmissions_;
  int64_t lastWireFrames_ = 0, lastWireBytes_ = 0;
};

}  // namespace dtbench::capture
