#pragma once
// Hand-made frames and pcap files for the capture tests: Ethernet II / IPv4 / TCP or UDP frames
// built byte by byte, written with libpcap's own writer (pcap_open_dead + pcap_dump) as a capture
// with a given snap length would have kept them, and capture directories around them.

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/capture/capture_files.h"

namespace dtbench::capture::testing {

using Bytes = std::vector<uint8_t>;

struct TcpSpec {
  std::string src = "10.0.0.1", dst = "10.0.0.2";
  uint16_t srcPort = 40000, dstPort = 5000;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0x10;  // ACK
  uint16_t window = 512;
  int64_t payload = 0;
  int mss = 0;            // > 0: an MSS option
  bool timestamps = false;
  bool sack = false;      // one SACK block
};

// Ethernet (14) + IPv4 (20) + TCP (20 + options) + payload zeros. Options: MSS 4 bytes, timestamps
// 12 (NOP NOP TS), SACK 12 (NOP NOP kind 5 length 10).
Bytes tcpFrame(const TcpSpec& spec);
// Ethernet + IPv4 + UDP (8) + payload zeros.
Bytes udpFrame(const std::string& src, const std::string& dst, uint16_t srcPort, uint16_t dstPort, int64_t payload);
// Ethernet + ARP request.
Bytes arpFrame(const std::string& sender, const std::string& target);

struct TimedFrame {
  int64_t t_us = 0;  // Unix microseconds
  Bytes bytes;
};

// Writes `frames` to `path` as an Ethernet pcap: len = the frame's size, caplen = min(len, snaplen).
void writePcap(const std::string& path, const std::vector<TimedFrame>& frames, int snaplen = 65535);

// A fresh, empty directory under the temporary directory.
std::string freshDirectory(const std::string& name);

// One interface of a capture file whose counters agree with `frames` seen on it (a link interface:
// rx + tx, so all of them in tx) within [before_s, after_s].
InterfaceCapture interfaceFor(const std::string& node, const std::string& name, const std::vector<std::string>& addresses,
                              const std::vector<TimedFrame>& frames, double before_s, double after_s);

}  // namespace dtbench::capture::testing
