#include "synthetic_pcap.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <arpa/inet.h>
#include <unistd.h>
#include <pcap/pcap.h>

namespace dtbench::capture::testing {
namespace {

void put16(Bytes& b, size_t at, uint32_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

void put32(Bytes& b, size_t at, uint32_t v) {
  put16(b, at, v >> 16);
  put16(b, at + 2, v & 0xFFFF);
}

void putAddress(Bytes& b, size_t at, const std::string& text) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) throw std::invalid_argument("not an IPv4 address: " + text);
  const auto* p = reinterpret_cast<const uint8_t*>(&a);
  for (int k = 0; k < 4; ++k) b[at + static_cast<size_t>(k)] = p[k];
}

Bytes ethernet(uint16_t etherType, size_t rest) {
  Bytes b(14 + rest, 0);
  for (size_t k = 0; k < 6; ++k) {
    b[k] = 0x02;
    b[6 + k] = 0x04;
  }
  put16(b, 12, etherType);
  return b;
}

void ipv4(Bytes& b, int protocol, size_t ipLength, const std::string& src, const std::string& dst) {
  b[14] = 0x45;
  put16(b, 16, static_cast<uint32_t>(ipLength));
  b[22] = 64;
  b[23] = static_cast<uint8_t>(protocol);
  putAddress(b, 26, src);
  putAddress(b, 30, dst);
}

}  // namespace

Bytes tcpFrame(const TcpSpec& s) {
  Bytes options;
  if (s.mss > 0) options.insert(options.end(), {2, 4, static_cast<uint8_t>(s.mss >> 8), static_cast<uint8_t>(s.mss)});
  if (s.timestamps) options.insert(options.end(), {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0});
  if (s.sack) options.insert(options.end(), {1, 1, 5, 10, 0, 0, 0, 0, 0, 0, 0, 0});
  const size_t tcpHeader = 20 + options.size();
  const size_t ipLength = 20 + tcpHeader + static_cast<size_t>(s.payload);
  Bytes b = ethernet(0x0800, ipLength);
  ipv4(b, 6, ipLength, s.src, s.dst);
  const size_t t = 34;
  put16(b, t, s.srcPort);
  put16(b, t + 2, s.dstPort);
  put32(b, t + 4, s.seq);
  put32(b, t + 8, s.ack);
  b[t + 12] = static_cast<uint8_t>((tcpHeader / 4) << 4);
  b[t + 13] = s.flags;
  put16(b, t + 14, s.window);
  for (size_t k = 0; k < options.size(); ++k) b[t + 20 + k] = options[k];
  return b;
}

Bytes udpFrame(const std::string& src, const std::string& dst, uint16_t srcPort, uint16_t dstPort, int64_t payload) {
  const size_t ipLength = 20 + 8 + static_cast<size_t>(payload);
  Bytes b = ethernet(0x0800, ipLength);
  ipv4(b, 17, ipLength, src, dst);
  put16(b, 34, srcPort);
  put16(b, 36, dstPort);
  put16(b, 38, static_cast<uint32_t>(8 + payload));
  return b;
}

Bytes arpFrame(const std::string& sender, const std::string& target) {
  Bytes b = ethernet(0x0806, 28);
  put16(b, 14, 1);
  put16(b, 16, 0x0800);
  b[18] = 6;
  b[19] = 4;
  put16(b, 20, 1);
  putAddress(b, 28, sender);
  putAddress(b, 38, target);
  return b;
}

void writePcap(const std::string& path, const std::vector<TimedFrame>& frames, int snaplen) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_MICRO);
  pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
  if (dumper == nullptr) {
    pcap_close(dead);
    throw std::runtime_error("cannot write " + path);
  }
  for (const TimedFrame& f : frames) {
    pcap_pkthdr header{};
    header.ts.tv_sec = f.t_us / 1000000;
    header.ts.tv_usec = f.t_us % 1000000;
    header.len = static_cast<bpf_u_int32>(f.bytes.size());
    header.caplen = std::min<bpf_u_int32>(header.len, static_cast<bpf_u_int32>(snaplen));
    pcap_dump(reinterpret_cast<u_char*>(dumper), &header, f.bytes.data());
  }
  pcap_dump_close(dumper);
  pcap_close(dead);
}

namespace {
// The directories freshDirectory made in this process, removed when the test process exits.
struct MadeDirectories {
  std::vector<std::filesystem::path> paths;
  ~MadeDirectories() {
    std::error_code ignored;
    for (const auto& p : paths) std::filesystem::remove_all(p, ignored);
  }
};
}  // namespace

std::string freshDirectory(const std::string& name) {
  // One directory per process: CTest runs each test case as its own process, two at a time, and two
  // cases that build the same capture must not delete each other's files.
  static MadeDirectories made;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("dtbench_capture_test_" + name + "." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  if (std::find(made.paths.begin(), made.paths.end(), dir) == made.paths.end()) made.paths.push_back(dir);
  return dir.string();
}

InterfaceCapture interfaceFor(const std::string& node, const std::string& name, const std::vector<std::string>& addresses,
                              const std::vector<TimedFrame>& frames, double before_s, double after_s) {
  InterfaceCapture i;
  i.name = name;
  i.pcap = node + "." + name + ".pcap";
  i.addresses = addresses;
  i.packetsCaptured = static_cast<int64_t>(frames.size());
  i.pcapReceived = i.packetsCaptured;
  i.countersBefore = {before_s, 1000, 10, 2000, 20};
  i.countersAfter = i.countersBefore;
  i.countersAfter.t_s = after_s;
  for (const TimedFrame& f : frames) {
    i.countersAfter.txBytes += static_cast<int64_t>(f.bytes.size());
    ++i.countersAfter.txPackets;
  }
  return i;
}

}  // namespace dtbench::capture::testing
