#pragma once
// One captured frame decoded into plain fields: the headers a network study needs, read from the
// bytes pcap kept (with the default snap length, 128 bytes: Ethernet, IP and TCP headers and no
// payload). Lengths that describe the whole packet come from the headers and from pcap's `len`,
// never from how much was captured, so a truncated capture still gives every length.
//
// Contract
//   decodePacket  link types Ethernet (EN10MB, with or without one or two 802.1Q tags), Linux
//                 cooked (LINUX_SLL) and raw IP (RAW); network IPv4 and IPv6 (without extension
//                 headers: any other next header is "other IP"); ARP (its sender and target IPv4
//                 addresses become src and dst); transport TCP and UDP.
//                 - frameLength is pcap's `len` (the frame as it was on the interface), capturedLength
//                   its `caplen`.
//                 - For TCP: payloadLength = IP total length (IPv6: 40 + payload length) − IP
//                   header − TCP header (data offset), so it does not depend on the snap length;
//                   seq, ack, flags, window; from the options (when captured): the MSS (SYN only),
//                   whether the timestamp and SACK options are present.
//                 - For UDP: payloadLength = the UDP length − 8.
//                 A header that is cut short or inconsistent (IP version, header lengths, a total
//                 length shorter than the headers) leaves kind at kOther with the fields decoded
//                 so far, the addresses included when the IP header was whole; never throws.
//   protocolName  "tcp", "udp", "icmp", "icmpv6", "arp", the IP protocol number as text for other
//                 IP, "other" for frames that are not IP and for TCP or UDP headers that did not
//                 decode.

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtbench::capture {

// pcap's link types this decoder reads (DLT_* values).
inline constexpr int kLinkEthernet = 1;     // DLT_EN10MB
inline constexpr int kLinkRaw = 12;         // DLT_RAW on Linux (LINKTYPE_RAW 101 in files)
inline constexpr int kLinkRawFile = 101;    // LINKTYPE_RAW
inline constexpr int kLinkLinuxCooked = 113;  // DLT_LINUX_SLL

// TCP flag bits.
inline constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpPsh = 0x08, kTcpAck = 0x10;

enum class PacketKind { kTcp, kUdp, kOther };

struct Packet {
  double t_s = 0;               // Unix seconds (the capture point's kernel timestamp)
  int64_t frameLength = 0;      // pcap `len`
  int64_t capturedLength = 0;   // pcap `caplen`
  PacketKind kind = PacketKind::kOther;
  int ipVersion = 0;            // 4, 6; 0 for a frame that is not IP (ARP: 0 with addresses)
  int protocol = -1;            // IP protocol number (IPPROTO_TCP, ...); -1 not IP
  bool arp = false;
  std::string src, dst;         // inet_ntop text; "" when not known
  int64_t ipTotalLength = 0;    // IPv4 total length, IPv6 40 + payload length; 0 not IP
  uint16_t srcPort = 0, dstPort = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t tcpFlags = 0;
  uint16_t window = 0;
  int mss = 0;                  // the MSS option of a SYN; 0 none
  bool tcpTimestamps = false;   // the timestamp option is present
  bool sack = false;            // SACK blocks are present
  int64_t payloadLength = 0;    // TCP or UDP payload bytes (from the headers' lengths)

  bool syn() const { return (tcpFlags & kTcpSyn) != 0; }
  bool fin() const { return (tcpFlags & kTcpFin) != 0; }
  bool rst() const { return (tcpFlags & kTcpRst) != 0; }
  bool hasAck() const { return (tcpFlags & kTcpAck) != 0; }
};

Packet decodePacket(const uint8_t* data, size_t capturedLength, size_t frameLength, double t_s, int linkType);

std::string protocolName(const Packet& packet);

}  // namespace dtbench::capture
