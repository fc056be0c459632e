#pragma once
// Tables on standard output, as `dtbench report` and `dtbench predict` print them (--format,
// --table; docs/report.md, "Formats").

#include <string>
#include <vector>

#include "experiments/cli/report_options.h"
#include "experiments/report/report_table.h"

namespace dtbench::experiments {

// The tables `names` names (in that order), or all of them when `names` is empty, in `format`:
// Markdown (after `preamble` when every table is printed), CSV (one named table: plain CSV; else each
// after a "# title" line) or JSON. Throws common::UsageError "--table: no table 'x' (the tables: ...)".
void printTables(const std::vector<report::Table>& tables, const std::vector<std::string>& names, ReportFormat format,
                 const std::string& preamble = "");

}  // namespace dtbench::experiments
