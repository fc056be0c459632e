// Frames decoded from hand-made bytes: lengths from the headers (so a 128-byte capture still gives
// the payload), options, other link and network protocols, and malformed frames as `other`.

#include <catch2/catch.hpp>

#include <string>

#include "experiments/capture/packet.h"
#include "experiments/capture/pcap_reader.h"
#include "synthetic_pcap.h"

using namespace dtbench::capture;
using namespace dtbench::capture::testing;

namespace {

Packet decode(const Bytes& b, size_t captured) {
  return decodePacket(b.data(), std::min(captured, b.size()), b.size(), 1.5, kLinkEthernet);
}

}  // namespace

TEST_CASE("A TCP frame cut at the snap length keeps its payload length from the headers", "[capture][packet]") {
  TcpSpec s;
  s.seq = 123456789;
  s.ack = 42;
  s.flags = kTcpAck | kTcpPsh;
  s.window = 700;
  s.payload = 1000;
  s.timestamps = true;
  const Bytes frame = tcpFrame(s);
  REQUIRE(frame.size() == 14 + 20 + 32 + 1000);
  const std::string dir = freshDirectory("packet_snaplen");
  writePcap(dir + "/a.pcap", {{1700000000123456, frame}}, 128);
  PcapReader reader(dir + "/a.pcap");
  CHECK(reader.linkType() == kLinkEthernet);
  CHECK(reader.linkTypeName() == "EN10MB");
  Packet p;
  REQUIRE(reader.next(p));
  CHECK(p.t_s == Approx(1700000000.123456).margin(1e-7));
  CHECK(p.frameLength == 1066);
  CHECK(p.capturedLength == 128);
  CHECK(p.kind == PacketKind::kTcp);
  CHECK(protocolName(p) == "tcp");
  CHECK(p.src == "10.0.0.1");
  CHECK(p.dst == "10.0.0.2");
  CHECK(p.srcPort == 40000);
  CHECK(p.dstPort == 5000);
  CHECK(p.seq == 123456789u);
  CHECK(p.ack == 42u);
  CHECK(p.tcpFlags == (kTcpAck | kTcpPsh));
  CHECK(p.window == 700);
  CHECK(p.tcpTimestamps);
  CHECK(p.ipTotalLength == 1052);
  CHECK(p.payloadLength == 1000);
  CHECK_FALSE(reader.next(p));
  CHECK_FALSE(reader.truncated());
}

TEST_CASE("The MSS option is read from a SYN", "[capture][packet]") {
  TcpSpec s;
  s.flags = kTcpSyn;
  s.mss = 1460;
  s.timestamps = true;
  const Packet p = decode(tcpFrame(s), 128);
  CHECK(p.syn());
  CHECK(p.mss == 1460);
  CHECK(p.payloadLength == 0);
  TcpSpec sack;
  sack.sack = true;
  CHECK(decode(tcpFrame(sack), 128).sack);
}

TEST_CASE("UDP and ARP and 802.1Q-tagged frames decode", "[capture][packet]") {
  const Packet udp = decode(udpFrame("10.0.0.254", "10.0.0.1", 6817, 7000, 100), 128);
  CHECK(udp.kind == PacketKind::kUdp);
  CHECK(udp.payloadLength == 100);
  CHECK(udp.frameLength == 142);
  CHECK(udp.srcPort == 6817);

  const Packet arp = decode(arpFrame("10.0.0.1", "10.0.0.254"), 128);
  CHECK(arp.kind == PacketKind::kOther);
  CHECK(protocolName(arp) == "arp");
  CHECK(arp.src == "10.0.0.1");
  CHECK(arp.dst == "10.0.0.254");
  CHECK(arp.ipVersion == 0);

  TcpSpec s;
  s.payload = 10;
  Bytes tagged = tcpFrame(s);
  tagged.insert(tagged.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  const Packet p = decode(tagged, 128);
  CHECK(p.kind == PacketKind::kTcp);
  CHECK(p.payloadLength == 10);
  CHECK(p.frameLength == 14 + 4 + 20 + 20 + 10);
}

TEST_CASE("Malformed and cut headers are counted as other without a crash", "[capture][packet]") {
  // IPv4 header cut short.
  Bytes cut = tcpFrame({});
  const Packet shortIp = decode(cut, 20);
  CHECK(shortIp.kind == PacketKind::kOther);
  CHECK(shortIp.src.empty());
  CHECK(shortIp.frameLength == static_cast<int64_t>(cut.size()));

  // TCP data offset below 5 words.
  Bytes badOffset = tcpFrame({});
  badOffset[34 + 12] = 0x30;
  const Packet p = decode(badOffset, 128);
  CHECK(p.kind == PacketKind::kOther);
  CHECK(protocolName(p) == "other");
  CHECK(p.src == "10.0.0.1");

  // IP total length shorter than the IP header.
  Bytes badLength = tcpFrame({});
  badLength[16] = 0;
  badLength[17] = 10;
  CHECK(decode(badLength, 128).kind == PacketKind::kOther);

  // TCP header cut within its fixed part, options running past the header, garbage, nothing.
  CHECK(decode(tcpFrame({}), 40).kind == PacketKind::kOther);
  TcpSpec syn;
  syn.flags = kTcpSyn;
  syn.mss = 1460;
  Bytes badOption = tcpFrame(syn);
  badOption[34 + 21] = 40;  // the MSS option claims 40 bytes
  CHECK(decode(badOption, 128).mss == 0);
  const Bytes garbage = {0xFF, 0x00, 0x12};
  CHECK(decode(garbage, 3).kind == PacketKind::kOther);
  CHECK(decodePacket(nullptr, 0, 60, 0, kLinkEthernet).frameLength == 60);
  CHECK(decodePacket(garbage.data(), 3, 3, 0, 9999).kind == PacketKind::kOther);
}

TEST_CASE("A file that is no pcap is an error naming it", "[capture][packet]") {
  const std::string dir = freshDirectory("packet_bad_file");
  {
    std::FILE* f = std::fopen((dir + "/bad.pcap").c_str(), "w");
    std::fputs("not a pcap file at all", f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(PcapReader(dir + "/bad.pcap"), Catch::Contains("bad.pcap"));
  CHECK_THROWS_WITH(PcapReader(dir + "/missing.pcap"), Catch::Contains("missing.pcap"));
}
