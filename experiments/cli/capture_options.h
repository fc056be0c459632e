#pragma once
// The command line of `dtbench capture` (capture_command.cpp), parsed once into one struct:
//   dtbench capture record --node NAME --interface IF[,IF...] --output DIR [--snaplen N] [--duration S]
//   dtbench capture analyze DIR [--output ODIR] [--keep-pcap] [--messages MDIR]

#include <string>
#include <vector>

namespace dtbench::experiments {

enum class CaptureAction { kRecord, kAnalyze };

struct CaptureOptions {
  CaptureAction action = CaptureAction::kRecord;
  // record
  std::string node;
  std::vector<std::string> interfaces;
  std::string output;          // record: the capture directory; analyze: where the tables go ("" = DIR)
  int snaplen = 128;
  double duration_s = 0;       // 0: until SIGINT or SIGTERM
  // analyze
  std::string directory;
  bool keepPcap = false;
  std::string messages;        // --messages MDIR ("" none)
  bool help = false;
  std::string helpText;
};

// Throws common::UsageError naming the bad flag or action.
CaptureOptions parseCaptureOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
