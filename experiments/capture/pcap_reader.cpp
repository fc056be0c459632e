#include "experiments/capture/pcap_reader.h"

#include <stdexcept>

#include <pcap/pcap.h>

namespace dtbench::capture {

PcapReader::PcapReader(const std::string& path) : path_(path) {
  char error[PCAP_ERRBUF_SIZE] = {};
  pcap_ = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_MICRO, error);
  if (pcap_ == nullptr) throw std::runtime_error("cannot read the pcap file " + path + " (" + error + ")");
  linkType_ = pcap_datalink(pcap_);
}

PcapReader::~PcapReader() {
  if (pcap_ != nullptr) pcap_close(pcap_);
}

bool PcapReader::next(Packet& packet) {
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  const int result = pcap_next_ex(pcap_, &header, &data);
  if (result == 1) {
    const double t_s = static_cast<double>(header->ts.tv_sec) + static_cast<double>(header->ts.tv_usec) * 1e-6;
    packet = decodePacket(data, header->caplen, header->len, t_s, linkType_);
    return true;
  }
  if (result == PCAP_ERROR) {
    truncated_ = true;
    error_ = pcap_geterr(pcap_);
  }
  return false;
}

std::string PcapReader::linkTypeName() const {
  const char* name = pcap_datalink_val_to_name(linkType_);
  return name != nullptr ? name : std::to_string(linkType_);
}

}  // namespace dtbench::capture
