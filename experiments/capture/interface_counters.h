#pragma once
// The kernel's own count of an interface's traffic, read at one moment: the independent check a
// capture is compared with (docs/wire.md, "dtbench capture analyze"). Every frame the interface
// received or sent is in these counters whether or not a capture kept it; on `lo` each packet is
// counted once as sent and once as received.
//
// The counters come from /proc/self/net/dev, which lists the interfaces of the reading process's
// network namespace. (/sys/class/net shows the namespace that mounted /sys: a process that entered a
// node's namespace with nsenter, as `cluster.sh capture` does, would read the machine's interfaces
// there, or none.) Both are the kernel's same per-device statistics.
//
// Contract
//   readInterfaceCounters  rx_bytes, rx_packets, tx_bytes, tx_packets and the Unix time of the
//                          reading (common::unixSeconds, taken just before the file is read).
//                          `procNetDev` replaces "/proc/self/net/dev" (tests). Throws
//                          std::runtime_error naming the interface and the file when the file cannot
//                          be read, has no line for the interface, or the line does not hold numbers.

#include <cstdint>
#include <string>

namespace dtbench::capture {

struct InterfaceCounters {
  double t_s = 0;
  int64_t rxBytes = 0, rxPackets = 0, txBytes = 0, txPackets = 0;
};

InterfaceCounters readInterfaceCounters(const std::string& interface,
                                        const std::string& procNetDev = "/proc/self/net/dev");

}  // namespace dtbench::capture
