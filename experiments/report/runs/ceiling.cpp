#include "experiments/report/runs/ceiling.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/csv_file.h"
#include "common/regular_file.h"

namespace dtbench::report {
using common::CsvFile;
using common::openRegularFile;

std::vector<CeilingRow> readCeiling(const std::string& path) {
  std::stringstream text;
  try {
    text << openRegularFile(path).rdbuf();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("--ceiling: ") + e.what());
  }
  const std::string content = text.str();
  // A UTF-8 byte order mark before the JSON's '[' (CsvFile skips it in a CSV).
  const size_t first = content.find_first_not_of(" \t\r\n", content.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0);
  std::vector<CeilingRow> rows;
  if (first != std::string::npos && content[first] == '[') {
    try {
      for (const nlohmann::json& r :
           nlohmann::json::parse(content.begin() + static_cast<std::ptrdiff_t>(first), content.end()))
        rows.push_back({r.at("backend").get<std::string>(), r.at("topology").get<std::string>(),
                        r.at("type").get<std::string>(), r.at("world_size").get<int>(), r.at("size").get<int64_t>(),
                        r.at("busbw_gbps").get<double>()});
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("--ceiling " + path + " is not a dtbench allreduce --json result (" + e.what() + ")");
    }
  } else {
    const CsvFile f = CsvFile::read(path);
    const size_t backend = f.column("backend"), topology = f.column("topology"), type = f.column("type"),
                 world = f.column("world_size"), size = f.column("size"), busbw = f.column("busbw_gbps");
    for (size_t i = 0; i < f.rows(); ++i)
      rows.push_back({f.text(i, backend), f.text(i, topology), f.text(i, type),
                      static_cast<int>(f.integer(i, world)), f.integer(i, size), f.number(i, busbw)});
  }
  if (rows.empty()) throw std::runtime_error("--ceiling " + path + " has no result rows");
  return rows;
}

std::optional<CeilingRow> closestCeiling(const std::vector<CeilingRow>& rows, const std::string& backend,
                                         const std::string& topology, int worldSize, const std::string& type,
                                         double bytes) {
  std::optional<CeilingRow> best;
  double bestDistance = 0;
  for (const CeilingRow& row : rows) {
    if (row.backend != backend || row.topology != topology || row.worldSize != worldSize || row.type != type ||
        row.size <= 0)
      continue;
    const double distance = std::abs(std::log(static_cast<double>(row.size)) - std::log(bytes));
    if (!best || distance < bestDistance - 1e-12 || (std::abs(distance - bestDistance) <= 1e-12 && row.size < best->size)) {
      best = row;
      bestDistance = distance;
    }
  }
  return best;
}

}  // namespace dtbench::report
