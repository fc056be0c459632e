#include "experiments/capture/packet.h"

#include <algorithm>

#include <arpa/inet.h>
#include <netinet/in.h>

namespace dtbench::capture {
namespace {

constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86DD, kEtherArp = 0x0806, kEther8021Q = 0x8100,
                   kEther8021AD = 0x88A8;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string addressText(int family, const uint8_t* bytes) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, bytes, text, sizeof text);
  return text;
}

// TCP options between the fixed header and the data offset, as far as captured.
void readTcpOptions(const uint8_t* p, size_t length, Packet& packet) {
  size_t i = 0;
  while (i < length) {
    const uint8_t kind = p[i];
    if (kind == 0) return;                   // end of options
    if (kind == 1) { ++i; continue; }        // no-operation
    if (i + 1 >= length) return;
    const uint8_t size = p[i + 1];
    if (size < 2 || i + size > length) return;
    if (kind == 2 && size == 4 && packet.syn()) packet.mss = be16(p + i + 2);
    if (kind == 8) packet.tcpTimestamps = true;
    if (kind == 5) packet.sack = true;
    i += size;
  }
}

// The transport header at `p` (`available` bytes captured), inside an IP packet whose payload
// (transport header and data) is `ipPayload` bytes long.
void decodeTransport(const uint8_t* p, size_t available, int64_t ipPayload, Packet& packet) {
  if (packet.protocol == IPPROTO_TCP) {
    if (available < 20) return;
    const size_t headerLength = size_t{static_cast<uint8_t>(p[12] >> 4)} * 4;
    if (headerLength < 20 || static_cast<int64_t>(headerLength) > ipPayload) return;
    packet.srcPort = be16(p);
    packet.dstPort = be16(p + 2);
    packet.seq = be32(p + 4);
    packet.ack = be32(p + 8);
    packet.tcpFlags = p[13];
    packet.window = be16(p + 14);
    readTcpOptions(p + 20, std::min(available, headerLength) - 20, packet);
    packet.payloadLength = ipPayload - static_cast<int64_t>(headerLength);
    packet.kind = PacketKind::kTcp;
  } else if (packet.protocol == IPPROTO_UDP) {
    if (available < 8) return;
    const int64_t udpLength = be16(p + 4);
    if (udpLength < 8 || udpLength > ipPayload) return;
    packet.srcPort = be16(p);
    packet.dstPort = be16(p + 2);
    packet.payloadLength = udpLength - 8;
    packet.kind = PacketKind::kUdp;
  }
}

void decodeIpv4(const uint8_t* p, size_t available, Packet& packet) {
  if (available < 20 || (p[0] >> 4) != 4) return;
  const size_t headerLength = size_t{static_cast<uint8_t>(p[0] & 0x0F)} * 4;
  const int64_t totalLength = be16(p + 2);
  if (headerLength < 20 || available < headerLength || totalLength < static_cast<int64_t>(headerLength)) return;
  packet.ipVersion = 4;
  packet.protocol = p[9];
  packet.ipTotalLength = totalLength;
  packet.src = addressText(AF_INET, p + 12);
  packet.dst = addressText(AF_INET, p + 16);
  const bool firstFragment = (be16(p + 6) & 0x1FFF) == 0;
  if (!firstFragment) return;
  decodeTransport(p + headerLength, available - headerLength, totalLength - static_cast<int64_t>(headerLength),
                  packet);
}

void decodeIpv6(const uint8_t* p, size_t available, Packet& packet) {
  if (available < 40 || (p[0] >> 4) != 6) return;
  const int64_t payloadLength = be16(p + 4);
  packet.ipVersion = 6;
  packet.protocol = p[6];
  packet.ipTotalLength = 40 + payloadLength;
  packet.src = addressText(AF_INET6, p + 8);
  packet.dst = addressText(AF_INET6, p + 24);
  decodeTransport(p + 40, available - 40, payloadLength, packet);
}

void decodeArp(const uint8_t* p, size_t available, Packet& packet) {
  packet.arp = true;
  // Ethernet/IPv4 ARP: hardware type 1, protocol 0x0800, sizes 6 and 4.
  if (available < 28 || be16(p) != 1 || be16(p + 2) != kEtherIpv4 || p[4] != 6 || p[5] != 4) return;
  packet.src = addressText(AF_INET, p + 14);
  packet.dst = addressText(AF_INET, p + 24);
}

void decodeNetwork(uint16_t etherType, const uint8_t* p, size_t available, Packet& packet) {
  if (etherType == kEtherIpv4) decodeIpv4(p, available, packet);
  else if (etherType == kEtherIpv6) decodeIpv6(p, available, packet);
  else if (etherType == kEtherArp) decodeArp(p, available, packet);
}

}  // namespace

Packet decodePacket(const uint8_t* data, size_t capturedLength, size_t frameLength, double t_s, int linkType) {
  Packet packet;
  packet.t_s = t_s;
  packet.frameLength = static_cast<int64_t>(frameLength);
  packet.capturedLength = static_cast<int64_t>(capturedLength);
  if (data == nullptr) return packet;
  if (linkType == kLinkEthernet) {
    size_t at = 12;
    if (capturedLength < at + 2) return packet;
    uint16_t etherType = be16(data + at);
    for (int tags = 0; tags < 2 && (etherType == kEther8021Q || etherType == kEther8021AD); ++tags) {
      at += 4;
      if (capturedLength < at + 2) return packet;
      etherType = be16(data + at);
    }
    at += 2;
    decodeNetwork(etherType, data + at, capturedLength - at, packet);
  } else if (linkType == kLinkLinuxCooked) {
    if (capturedLength < 16) return packet;
    decodeNetwork(be16(data + 14), data + 16, capturedLength - 16, packet);
  } else if (linkType == kLinkRaw || linkType == kLinkRawFile) {
    if (capturedLength < 1) return packet;
    const int version = data[0] >> 4;
    decodeNetwork(version == 6 ? kEtherIpv6 : kEtherIpv4, data, capturedLength, packet);
  }
  return packet;
}

std::string protocolName(const Packet& packet) {
  if (packet.arp) return "arp";
  if (packet.protocol < 0) return "other";
  // A TCP or UDP header that did not decode: counted as other.
  if ((packet.protocol == IPPROTO_TCP || packet.protocol == IPPROTO_UDP) && packet.kind == PacketKind::kOther)
    return "other";
  switch (packet.protocol) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return std::to_string(packet.protocol);
  }
}

}  // namespace dtbench::capture
