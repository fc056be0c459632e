#pragma once
// Live capture of several interfaces of this network namespace into pcap files, the work of
// `dtbench capture record` (docs/wire.md).
//
// Contract
//   recordInterfaces(options, stop, onReady)
//     - holds `<output>/.<node>.record.lock` (common::FileLock) while it records: a second recorder
//       of the same node into the same directory is a std::runtime_error naming the first's pid.
//       An interface named twice is a std::runtime_error.
//     - opens every interface with pcap_create: snap length `snaplen`, immediate mode, a kernel
//       buffer of `bufferBytes`, promiscuous off, microsecond timestamps; pcap_activate. An interface
//       that does not exist, or missing privileges, is a std::runtime_error naming the interface
//       ("run as root" for the latter); nothing is left open and no file is written.
//     - once every interface is open, writes `<output>/<node>.<interface>.pcap` per interface
//       (pcap_dump; a file that cannot be created removes those made before it); reads the interfaces'
//       addresses and counters_before right after activation, then creates `<output>/<node>.ready`
//       and calls onReady (the command prints `ready`);
//     - captures until `stop` becomes true (a signal handler sets it) or `duration_s` (> 0) passed,
//       polling every interface's selectable descriptor (at most 100 ms between looks at `stop`);
//     - then reads counters_after, drains what the kernel still buffers (non-blocking reads until
//       none is left, for at most 2 s under steady traffic), takes pcap_stats, closes the files and writes `<output>/<node>.capture.json`.
//     Returns what it wrote into the capture file. A pcap_dropped > 0 is reported to `warnings`
//     (when not null) as well as written.

#include <atomic>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/capture/capture_files.h"

namespace dtbench::capture {

struct RecordOptions {
  std::string node;
  std::vector<std::string> interfaces;
  std::string outputDir;
  int snaplen = 128;
  double duration_s = 0;            // 0: until stop
  int bufferBytes = 64 << 20;
};

CaptureFile recordInterfaces(const RecordOptions& options, const std::atomic<bool>& stop,
                             const std::function<void()>& onReady, std::ostream* warnings);

std::string pcapFileName(const std::string& node, const std::string& interface);
std::string readyFileName(const std::string& node);
// ".<node>.record.lock": held by the node's recorder while it records (see recordInterfaces).
std::string recordLockFileName(const std::string& node);

}  // namespace dtbench::capture
