#pragma once
// The command line of `dtbench audit` (audit_command.cpp), parsed once into one struct:
//   dtbench audit [--show N] RUNDIR

#include <cstdint>
#include <string>
#include <vector>

namespace dtbench::experiments {

struct AuditOptions {
  std::string directory;  // the run directory
  int64_t show = 10;      // --show: duplicate and missing indices named
  bool help = false;
  std::string helpText;
};

// Throws common::UsageError naming the bad flag, or saying that RUNDIR is missing.
AuditOptions parseAuditOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
