#pragma once
// Reads a pcap file offline (libpcap's pcap_open_offline), one decoded packet at a time, in the
// file's order (the order the capture point saw them).
//
// Contract
//   PcapReader(path)  opens the file with microsecond timestamps; throws std::runtime_error naming
//                     the file and libpcap's reason when it cannot be opened or is no pcap file.
//   next(packet)      the next packet decoded (decodePacket with the file's link type); false at
//                     the end. A file that cannot be read further (cut short by a recorder killed
//                     mid-write, or a record header whose length is impossible) ends there:
//                     truncated() is then true and error() is libpcap's reason. Never throws for
//                     the packets' contents.
//   linkType          the file's link type (DLT_*), linkTypeName pcap's name for it ("EN10MB").

#include <string>

#include "experiments/capture/packet.h"

typedef struct pcap pcap_t;

namespace dtbench::capture {

class PcapReader {
 public:
  explicit PcapReader(const std::string& path);
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  bool next(Packet& packet);
  int linkType() const { return linkType_; }
  std::string linkTypeName() const;
  bool truncated() const { return truncated_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  pcap_t* pcap_ = nullptr;
  int linkType_ = 0;
  bool truncated_ = false;
  std::string error_;
};

}  // namespace dtbench::capture
