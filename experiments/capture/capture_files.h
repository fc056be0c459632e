#pragma once
// `<node>.capture.json`: what `dtbench capture record` knows about its capture once it stopped
// (docs/wire.md, "dtbench capture record"): the node, the snap length, when capturing began and
// ended, and per interface its pcap file, link type, addresses, pcap_stats and the kernel's
// counters before and after.
//
// Contract
//   toJson / captureFileFromJson  the file's keys exactly as docs/wire.md names them; the one reads
//                                 back what the other writes. captureFileFromJson throws
//                                 std::runtime_error naming `where` and the key that is missing or
//                                 of the wrong type, or a "pcap" that is no plain file name (a path
//                                 such as "../x.pcap" or "/x.pcap" is refused: analyze reads and
//                                 deletes only files inside its directory).
//   writeCaptureFile              writes the JSON (indented) to `path`; throws std::runtime_error
//                                 naming the path when it cannot be written.
//   readCaptureFile               reads `path`; throws std::runtime_error naming the path when it
//                                 cannot be read, is not JSON, or misses a key.
//   captureFileName               "<node>.capture.json".

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/capture/interface_counters.h"

namespace dtbench::capture {

struct InterfaceCapture {
  std::string name;                     // the interface, e.g. "eth0", "lo"
  std::string pcap;                     // its file's name in the capture directory
  std::string linkType = "EN10MB";      // pcap's name of the link type
  std::vector<std::string> addresses;   // its IPv4 and IPv6 addresses when capture began
  int64_t packetsCaptured = 0;          // written to the file
  int64_t pcapReceived = 0, pcapDropped = 0, interfaceDropped = 0;  // pcap_stats: ps_recv, ps_drop, ps_ifdrop
  InterfaceCounters countersBefore, countersAfter;
};

struct CaptureFile {
  std::string node;
  int snaplen = 128;
  double started_s = 0, stopped_s = 0;
  std::vector<InterfaceCapture> interfaces;
};

nlohmann::json toJson(const CaptureFile& file);
CaptureFile captureFileFromJson(const nlohmann::json& json, const std::string& where);

void writeCaptureFile(const std::string& path, const CaptureFile& file);
CaptureFile readCaptureFile(const std::string& path);

std::string captureFileName(const std::string& node);

}  // namespace dtbench::capture
