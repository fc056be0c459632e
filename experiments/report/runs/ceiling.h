#pragma once
// CeilingRow: one row of a `dtbench allreduce --csv` or `--json` result, the measured ceiling that
// Table 3's utilization divides by (docs/report.md, "--ceiling").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtbench::report {

struct CeilingRow {
  std::string backend, topology, type;
  int worldSize = 0;
  int64_t size = 0;  // bytes
  double busbwGBps = 0;
};

// Reads a .csv or .json result (by its first non-blank character). Throws std::runtime_error
// naming the file and what is wrong (missing columns, no rows).
std::vector<CeilingRow> readCeiling(const std::string& path);

// Among rows of the same backend, topology, world size and type, the one whose size is closest to
// `bytes` in log scale (the smaller on a tie); nullopt when there is none.
std::optional<CeilingRow> closestCeiling(const std::vector<CeilingRow>& rows, const std::string& backend,
                                         const std::string& topology, int worldSize, const std::string& type,
                                         double bytes);

}  // namespace dtbench::report
