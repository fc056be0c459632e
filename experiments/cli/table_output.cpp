#include "experiments/cli/table_output.h"

#include <cstdio>
#include <stdexcept>

#include "common/usage_error.h"

namespace dtbench::experiments {

void printTables(const std::vector<report::Table>& tables, const std::vector<std::string>& names, ReportFormat format,
                 const std::string& preamble) {
  std::vector<report::Table> shown = tables;
  if (!names.empty()) {
    shown.clear();
    try {
      for (const std::string& name : names) shown.push_back(report::findTable(tables, name));
    } catch (const std::out_of_range& e) {
      throw common::UsageError(std::string("--table: ") + e.what());
    }
  }
  if (format == ReportFormat::kMarkdown) {
    std::printf("%s%s", names.empty() ? preamble.c_str() : "", report::renderMarkdown(shown).c_str());
  } else if (format == ReportFormat::kCsv) {
    std::printf("%s", shown.size() == 1 && !names.empty() ? report::renderCsv(shown[0]).c_str()
                                                          : report::renderCsvAll(shown).c_str());
  } else {
    std::printf("%s\n", report::renderJson(shown).dump(1).c_str());
  }
  std::fflush(stdout);
}

}  // namespace dtbench::experiments
