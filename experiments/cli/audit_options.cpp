#include "experiments/cli/audit_options.h"

#include <cxxopts.hpp>

#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"

namespace dtbench::experiments {
namespace {

// `dtbench audit`'s flags besides RUNDIR; the default is AuditOptions'.
const std::vector<OptionRow<AuditOptions>>& auditRows() {
  static const std::vector<OptionRow<AuditOptions>> rows{
      {"show", "", "How many duplicate and missing indices to name", ValueKind::kInteger,
       [](const AuditOptions& o) { return std::to_string(o.show); },
       [](AuditOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.show = v.as<long long>();
         if (o.show < 0) throwUsage("audit", flag + " must be >= 0, got " + std::to_string(o.show));
       },
       "N"},
  };
  return rows;
}

}  // namespace

AuditOptions parseAuditOptions(const std::vector<std::string>& args) {
  cxxopts::Options options(
      "dtbench audit",
      "Checks the sample ledger of a run trained with dtbench train --sample-ledger (sample_ledger.rank<R>.csv,\n"
      "every rank's dataset indices of every step): in every epoch, over every rank and segment, each sample of\n"
      "the training set trained exactly once, apart from what the data order leaves out by design (drop-last,\n"
      "--max-steps: the last ones of the epoch's permutation) or repeats by design (the padding without\n"
      "drop-last). The run's last epoch, when unfinished, is checked for duplicates only. Prints one row per\n"
      "epoch (expected, seen, duplicates, missing, dropped, padded, ranks, segments) and names the first\n"
      "duplicate indices with the rank and step of each occurrence, and the first missing ones; docs/audit.md.\n"
      "Exit 0: clean; 1: duplicates or missing samples, a rank's ledger missing or unreadable; 2: usage error\n"
      "(no RUNDIR, no ledger in it).\n\n"
      "Synopsis: dtbench audit [--show N] RUNDIR");
  options.set_width(100);
  return parseRunDirectoryRows(options, "audit", args, auditRows());
}

}  // namespace dtbench::experiments
