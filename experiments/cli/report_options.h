#pragma once
// The command line of `dtbench report` (report_command.cpp), parsed once into one struct.

#include <optional>
#include <string>
#include <vector>

#include "common/named_values.h"

namespace dtbench::experiments {

enum class ReportFormat { kMarkdown, kCsv, kJson };

// md, csv, json (--format).
const common::NamedValues<ReportFormat>& reportFormatNames();

struct ReportOptions {
  std::vector<std::string> directories;
  ReportFormat format = ReportFormat::kMarkdown;
  std::vector<std::string> tables;  // --table NAME[,NAME...]: print those tables alone
  std::optional<int> epoch;
  std::string ceilingPath;
  std::optional<double> gpuHourPrice;
  std::optional<double> targetAccuracy;
  std::string csvDir, jobTablePath, plotsDir;
  std::vector<std::string> sacctFiles;  // --sacct FILE (repeatable)
  std::vector<std::string> traceFiles;  // --trace FILE (repeatable)
  std::string traceColumns;             // --trace-columns MAP
  bool help = false;
  std::string helpText;
};

// Throws common::UsageError naming the bad flag.
ReportOptions parseReportOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
