#pragma once
// batches.csv (docs/run-directory.md) read back by the tests: one column's cells, row by row, as
// written (an empty cell is "").

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch_torch.h"

namespace dtbench::testing {

// The cells of batches.csv's column `name`, row by row.
inline std::vector<std::string> batchesColumn(const std::string& runDir, const std::string& name) {
  std::ifstream in(runDir + "/batches.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) header.push_back(cell);
  size_t index = 0;
  while (index < header.size() && header[index] != name) ++index;
  REQUIRE(index < header.size());
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (line.back() == ',') cells.emplace_back();
    REQUIRE(cells.size() == header.size());
    out.push_back(cells[index]);
  }
  return out;
}

}  // namespace dtbench::testing
