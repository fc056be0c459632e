// TCP streams against hand-worked cases: offsets from the SYN, retransmissions (whole and partial)
// and their kind, sequence numbers that wrap, the MSS and the wire frames of a super-packet.

#include <catch2/catch.hpp>

#include <vector>

#include "experiments/capture/tcp_streams.h"
#include "synthetic_pcap.h"

using namespace dtbench::capture;
using namespace dtbench::capture::testing;

namespace {

const std::string kA = "10.0.0.1", kB = "10.0.0.2";

Packet packetOf(const TcpSpec& s, double t_s) {
  const Bytes b = tcpFrame(s);
  return decodePacket(b.data(), std::min<size_t>(b.size(), 128), b.size(), t_s, kLinkEthernet);
}

TcpSpec fromA(uint32_t seq, int64_t payload, uint8_t flags = kTcpAck) {
  TcpSpec s;
  s.src = kA;
  s.dst = kB;
  s.srcPort = 40000;
  s.dstPort = 5000;
  s.seq = seq;
  s.ack = 5001;
  s.payload = payload;
  s.flags = flags;
  s.timestamps = true;
  return s;
}

TcpSpec fromB(uint32_t ack, uint8_t flags = kTcpAck) {
  TcpSpec s;
  s.src = kB;
  s.dst = kA;
  s.srcPort = 5000;
  s.dstPort = 40000;
  s.seq = 5001;
  s.ack = ack;
  s.flags = flags;
  s.timestamps = true;
  return s;
}

// The handshake of docs' worked example: SYN seq 1000 and SYN-ACK seq 5000, MSS 1460, timestamps.
void handshake(FlowTable& table) {
  TcpSpec syn = fromA(1000, 0, kTcpSyn);
  syn.mss = 1460;
  TcpSpec synAck = fromB(1001, kTcpSyn | kTcpAck);
  synAck.seq = 5000;
  synAck.mss = 1460;
  table.add(packetOf(syn, 1.0));
  table.add(packetOf(synAck, 1.0001));
  table.add(packetOf(fromA(1001, 0), 1.0002));
}

}  // namespace

TEST_CASE("A segment lost and resent after a duplicate ACK is a fast retransmission", "[capture][streams]") {
  FlowTable table;
  handshake(table);
  const int flow = table.add(packetOf(fromA(1001, 1448), 1.001));
  table.add(packetOf(fromA(2449, 1448), 1.002));
  table.add(packetOf(fromB(2449), 1.003));  // ACKs the first segment
  table.add(packetOf(fromA(3897, 1448), 1.004));
  table.add(packetOf(fromB(2449), 1.005));  // the third arrived, the second did not: a duplicate
  table.add(packetOf(fromA(2449, 1448), 1.010));
  const Flow& f = table.flows()[static_cast<size_t>(flow)];
  CHECK(f.id == 0);
  CHECK(f.key.src == kA);
  CHECK(f.key.protocol == 6);
  CHECK(f.mss == 1448);
  REQUIRE(f.segments.size() == 4);
  CHECK(f.segments[0].offset == 0);
  CHECK(f.segments[1].offset == 1448);
  CHECK(f.segments[2].offset == 2896);
  CHECK(f.segments[3].offset == 1448);
  CHECK(f.segments[3].retransmittedBytes == 1448);
  CHECK(f.packets == 6);
  CHECK(f.payloadBytes == 4 * 1448);
  CHECK(f.streamBytes == 3 * 1448);
  CHECK(f.retransmittedPackets == 1);
  CHECK(f.retransmittedBytes == 1448);
  CHECK(f.timeouts == 0);
  REQUIRE(table.retransmissions().size() == 1);
  const Retransmission& r = table.retransmissions()[0];
  CHECK(r.flow == flow);
  CHECK(r.seqOffset == 1448);
  CHECK(r.bytes == 1448);
  CHECK(r.kind == "fast");
  CHECK(r.sinceFirst_s == Approx(0.008));
}

TEST_CASE("A segment resent without a duplicate ACK or SACK after the minimum RTO is a timeout", "[capture][streams]") {
  FlowTable table;
  handshake(table);
  table.add(packetOf(fromA(1001, 1448), 1.001));
  table.add(packetOf(fromA(2449, 1448), 1.002));
  table.add(packetOf(fromB(2449), 1.003));  // an ordinary ACK: no duplicate
  table.add(packetOf(fromA(2449, 1448), 1.250));
  REQUIRE(table.retransmissions().size() == 1);
  CHECK(table.retransmissions()[0].kind == "timeout");
  CHECK(table.retransmissions()[0].sinceFirst_s == Approx(0.248));
  CHECK(table.flows()[0].timeouts == 1);

  SECTION("resent sooner than the minimum RTO it is one of the early timers: a probe") {
    FlowTable early;
    handshake(early);
    early.add(packetOf(fromA(1001, 1448), 1.001));
    early.add(packetOf(fromA(2449, 1448), 1.002));
    early.add(packetOf(fromB(2449), 1.0021));
    early.add(packetOf(fromA(2449, 1448), 1.0023));  // 300 us after its first transmission
    REQUIRE(early.retransmissions().size() == 1);
    CHECK(early.retransmissions()[0].kind == "probe");
    CHECK(early.flows()[0].timeouts == 0);
    CHECK(early.flows()[0].retransmittedPackets == 1);
  }

  SECTION("a SACK from the receiver makes it fast") {
    FlowTable sacked;
    handshake(sacked);
    sacked.add(packetOf(fromA(1001, 1448), 1.001));
    sacked.add(packetOf(fromA(2449, 1448), 1.002));
    sacked.add(packetOf(fromA(3897, 1448), 1.003));
    TcpSpec sack = fromB(2449);
    sack.sack = true;
    sacked.add(packetOf(sack, 1.004));
    sacked.add(packetOf(fromA(2449, 1448), 1.006));
    REQUIRE(sacked.retransmissions().size() == 1);
    CHECK(sacked.retransmissions()[0].kind == "fast");
  }
}

TEST_CASE("A partial overlap retransmits only the overlapping bytes", "[capture][streams]") {
  FlowTable table;
  handshake(table);
  table.add(packetOf(fromA(1001, 1000), 1.001));  // [0, 1000)
  table.add(packetOf(fromA(1501, 1000), 1.002));  // [500, 1500): 500 again, 500 new
  table.add(packetOf(fromA(2501, 500), 1.003));   // [1500, 2000)
  table.add(packetOf(fromA(1001, 2000), 1.004));  // [0, 2000): all again
  const Flow& f = table.flows()[0];
  CHECK(f.payloadBytes == 4500);
  CHECK(f.streamBytes == 2000);
  CHECK(f.retransmittedPackets == 2);
  CHECK(f.retransmittedBytes == 2500);
  REQUIRE(table.retransmissions().size() == 2);
  CHECK(table.retransmissions()[0].seqOffset == 500);
  CHECK(table.retransmissions()[0].bytes == 500);
  CHECK(table.retransmissions()[0].sinceFirst_s == Approx(0.001));
  CHECK(table.retransmissions()[1].seqOffset == 0);
  CHECK(table.retransmissions()[1].bytes == 2000);
  CHECK(table.retransmissions()[1].sinceFirst_s == Approx(0.003));
}

TEST_CASE("Sequence numbers that wrap past 2^32 keep counting", "[capture][streams]") {
  FlowTable table;  // no SYN: the first segment is the origin, the MSS the default
  table.add(packetOf(fromA(4294966272u, 1000), 2.0));  // 2^32 − 1024
  table.add(packetOf(fromA(4294967272u, 1000), 2.1));  // 2^32 − 24
  table.add(packetOf(fromA(976u, 1000), 2.2));          // 2^32 − 24 + 1000 wrapped
  table.add(packetOf(fromA(4294967272u, 1000), 2.3));  // the second again
  const Flow& f = table.flows()[0];
  CHECK(f.mss == kDefaultMss);
  REQUIRE(f.segments.size() == 4);
  CHECK(f.segments[0].offset == 0);
  CHECK(f.segments[1].offset == 1000);
  CHECK(f.segments[2].offset == 2000);
  CHECK(f.segments[3].offset == 1000);
  CHECK(f.streamBytes == 3000);
  CHECK(f.retransmittedBytes == 1000);
}

TEST_CASE("The MSS from the SYN sets the wire frames of a 64 KB super-packet", "[capture][streams]") {
  FlowTable table;
  handshake(table);  // MSS 1460 with timestamps: 1448 payload bytes per frame
  TcpSpec big = fromA(1001, 45 * 1448);
  table.add(packetOf(big, 1.001));
  CHECK(table.lastWireFrames() == 45);
  // 65160 payload + 45 × 66 header bytes (Ethernet 14, IP 20, TCP 20 + 12 of timestamps)
  CHECK(table.lastWireBytes() == 65160 + 45 * 66);
  table.add(packetOf(fromA(1001 + 65160, 1449), 1.002));
  CHECK(table.lastWireFrames() == 2);
  CHECK(table.lastWireBytes() == 1449 + 2 * 66);
  const Flow& f = table.flows()[0];
  CHECK(f.mss == 1448);
  CHECK(f.frameBytes == 70 + 66 + (65160 + 66) + (1449 + 66));  // SYN (MSS and timestamps), ACK, two segments
  CHECK(f.wireFrames == 1 + 1 + 45 + 2);
  CHECK(f.wireBytes == 70 + 66 + (65160 + 45 * 66) + (1449 + 2 * 66));

  SECTION("without timestamps the MSS is the option's") {
    FlowTable plain;
    TcpSpec synAck = fromB(1, kTcpSyn | kTcpAck);
    synAck.mss = 1000;
    synAck.timestamps = false;
    plain.add(packetOf(synAck, 1.0));
    TcpSpec data = fromA(1, 2500);
    data.timestamps = false;
    plain.add(packetOf(data, 1.1));
    CHECK(plain.lastWireFrames() == 3);
    CHECK(plain.lastWireBytes() == 2500 + 3 * 54);
    CHECK(plain.flows()[1].mss == 1000);
  }
}

TEST_CASE("Non-TCP packets make flows of their own and frames without addresses none", "[capture][streams]") {
  FlowTable table;
  const Bytes udp = udpFrame("10.0.0.254", "10.0.0.1", 6817, 7000, 100);
  CHECK(table.add(decodePacket(udp.data(), udp.size(), udp.size(), 1, kLinkEthernet)) == 0);
  const Bytes arp = arpFrame("10.0.0.1", "10.0.0.254");
  CHECK(table.add(decodePacket(arp.data(), arp.size(), arp.size(), 1, kLinkEthernet)) == -1);
  CHECK(table.lastWireBytes() == 42);
  REQUIRE(table.flows().size() == 1);
  CHECK(flowProtocolName(table.flows()[0].key.protocol) == "udp");
  CHECK(table.flows()[0].payloadBytes == 100);
  CHECK(table.flows()[0].segments.empty());
}
