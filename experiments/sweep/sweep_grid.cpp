#include "experiments/sweep/sweep_grid.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <system_error>
#include <type_traits>

#include "common/whole_number.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "run/settings.h"

namespace dtbench::sweep {
namespace {

using common::UsageError;

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

std::string canonicalKey(const std::string& key) {
  if (key == "gpus") return "world";
  if (key == "batch-size") return "batch";
  return key;
}

// The train flag a key sets ("" for world and nodes, which size and place the ranks instead).
std::string flagOf(const std::string& key) {
  if (key == "world" || key == "nodes") return "";
  if (key == "batch") return "--batch-size";
  return "--" + key;
}

bool isValidKey(const std::string& key) {
  if (key.empty() || key[0] < 'a' || key[0] > 'z') return false;
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

// The most ranks one point may have (world, or nodes × ranks per node).
constexpr long long kMostRanks = 1000000;

// Keys whose values are positive integers the sweep reads itself.
bool isCountKey(const std::string& key) { return key == "world" || key == "nodes" || key == "batch"; }

// --mode's value that runs one process driving several local GPUs.
const std::string& dataParallelName() {
  static const std::string name = run::modeNames().name(run::ParallelMode::kDp);
  return name;
}

// The mode key's values are --mode's names: ddp and dp.
void checkMode(const std::string& value, const std::string& where) {
  for (const std::string& name : run::modeNames().names())
    if (value == name) return;
  throw UsageError(where + ": mode takes " + common::joinList(run::modeNames().names(), " or ") + ", got '" + value +
                   "' (ddp: one process per rank; dp: one process driving the point's world GPUs, --device cuda)");
}

[[noreturn]] void refuseDataParallelOnNodes(const std::string& where) {
  throw UsageError(where + ": mode=dp with a nodes axis: --mode dp is one process driving the GPUs of one machine, so "
                   "it cannot be placed on nodes; give dp points world=N1,N2 (the GPUs of their process) in a sweep "
                   "without nodes");
}

int positiveInteger(const std::string& value, const std::string& key, const std::string& where) {
  const long long parsed = common::wholeNumber(value).value_or(0);
  if (parsed < 1 || parsed > kMostRanks)
    throw UsageError(where + ": " + key + " needs positive integers, got '" + value + "'" +
                     (key == "world"   ? " (world is the number of ranks, at least 1)"
                      : key == "nodes" ? " (nodes is the number of nodes the ranks are placed on, at least 1)"
                                       : ""));
  return static_cast<int>(parsed);
}

[[noreturn]] void refuseWorldWithNodes(const std::string& where) {
  throw UsageError(where + ": grid keys world and nodes cannot both be given: with nodes a point's world is "
                   "nodes × --ranks-per-node; give nodes=M1,M2 with --ranks-per-node K to place ranks on nodes, or "
                   "world=N1,N2 alone for ranks on one machine");
}

std::string safe(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '+'))
      c = '_';
  return out;
}

}  // namespace

GridAxis parseGridAxis(const std::string& text, const std::string& where) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos)
    throw UsageError(where + ": '" + text + "' is not KEY=V1,V2,... (e.g. --grid batch=32,64)");
  const std::string key = trim(text.substr(0, equals));
  if (!isValidKey(key))
    throw UsageError(where + ": '" + key + "' is not a key; keys are world (or gpus), nodes, batch, or a dtbench "
                     "train flag name without its dashes, e.g. model, topology, lr");
  GridAxis axis;
  axis.key = canonicalKey(key);
  axis.where = where;
  if (axis.key == "out" || axis.key == "rank" || axis.key == "world-size" || axis.key == "resume")
    throw UsageError(where + ": the sweep sets --" + axis.key + " itself; it cannot be a grid key" +
                     (axis.key == "world-size" ? " (use world=N1,N2 for the number of ranks)" : ""));
  const std::string list = text.substr(equals + 1);
  if (trim(list).empty())
    throw UsageError(where + ": " + key + " has no values; give at least one, e.g. " + key + "=V1,V2");
  std::stringstream stream(list);
  for (std::string value; std::getline(stream, value, ',');) {
    value = trim(value);
    if (value.empty())
      throw UsageError(where + ": " + key + " has an empty value in '" + list + "'; separate values by single commas");
    for (const std::string& seen : axis.values)
      if (seen == value) throw UsageError(where + ": " + key + " lists '" + value + "' twice; give each value once");
    if (isCountKey(axis.key)) positiveInteger(value, axis.key, where);
    if (axis.key == "mode") checkMode(value, where);
    axis.values.push_back(value);
  }
  if (list.back() == ',')
    throw UsageError(where + ": " + key + " has an empty value in '" + list + "'; separate values by single commas");
  if (isCountKey(axis.key)) checkNumericAxis(axis, true);
  return axis;
}

std::vector<GridAxis> parseGridText(const std::string& text, const std::string& path) {
  std::vector<GridAxis> axes;
  std::stringstream stream(text);
  int lineNumber = 0;
  for (std::string line; std::getline(stream, line);) {
    ++lineNumber;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    if (trim(line).empty()) continue;
    axes.push_back(parseGridAxis(trim(line), path + ":" + std::to_string(lineNumber)));
  }
  return axes;
}

std::vector<GridAxis> readGridFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw UsageError("--grid-file: '" + path + "' is a directory; give a file with one KEY=V1,V2 per line");
  std::ifstream in(path);
  if (!in) throw UsageError("--grid-file: cannot read '" + path + "'; give a file with one KEY=V1,V2 per line");
  std::stringstream content;
  content << in.rdbuf();
  std::string text = content.str();
  // A byte order mark, as editors on some systems save UTF-8, is no part of the first key.
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  return parseGridText(text, path);
}

bool hasAxis(const Grid& grid, const std::string& key) {
  for (const GridAxis& axis : grid.axes)
    if (axis.key == key) return true;
  return false;
}

void addAxis(Grid& grid, GridAxis axis) {
  if ((axis.key == "world" && hasAxis(grid, "nodes")) || (axis.key == "nodes" && hasAxis(grid, "world")))
    refuseWorldWithNodes(axis.where);
  const auto dataParallel = [](const GridAxis& a) {
    return a.key == "mode" && std::find(a.values.begin(), a.values.end(), dataParallelName()) != a.values.end();
  };
  if ((dataParallel(axis) && hasAxis(grid, "nodes")) ||
      (axis.key == "nodes" && std::any_of(grid.axes.begin(), grid.axes.end(), dataParallel)))
    refuseDataParallelOnNodes(axis.where);
  for (const GridAxis& existing : grid.axes)
    if (existing.key == axis.key)
      throw UsageError("grid key '" + axis.key + "' is given twice" +
                       (axis.key == "world" ? " (gpus is another name for world)"
                        : axis.key == "batch" ? " (batch-size is another name for batch)"
                                              : "") +
                       "; list all its values in one KEY=V1,V2");
  grid.axes.push_back(std::move(axis));
}

std::string pointName(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string name;
  for (const auto& [key, value] : settings) {
    if (!name.empty()) name += '-';
    const bool digit = !value.empty() && value[0] >= '0' && value[0] <= '9';
    name += safe(key) + (digit ? "" : "_") + safe(value);
  }
  return name;
}

std::vector<GridPoint> expandGrid(const Grid& grid, int ranksPerNode) {
  if (grid.axes.empty())
    throw UsageError("the grid is empty; give at least one --grid KEY=V1,V2 (e.g. --grid batch=32,64) or --grid-file");
  if (ranksPerNode < 1)
    throw UsageError("--ranks-per-node must be at least 1, got " + std::to_string(ranksPerNode));
  if (hasAxis(grid, "world") && hasAxis(grid, "nodes")) refuseWorldWithNodes("--grid");
  size_t count = 1;
  for (const GridAxis& axis : grid.axes) count *= axis.values.size();
  std::vector<GridPoint> points;
  std::map<std::string, size_t> byName;
  for (size_t index = 0; index < count; ++index) {
    // Mixed-radix digits of `index`, the last axis least significant.
    std::vector<size_t> digits(grid.axes.size());
    size_t rest = index;
    for (size_t a = grid.axes.size(); a-- > 0;) {
      digits[a] = rest % grid.axes[a].values.size();
      rest /= grid.axes[a].values.size();
    }
    GridPoint point;
    for (size_t a = 0; a < grid.axes.size(); ++a) {
      const std::string& key = grid.axes[a].key;
      const std::string& value = grid.axes[a].values[digits[a]];
      point.settings.emplace_back(key, value);
      if (key == "world") {
        point.worldSize = positiveInteger(value, key, grid.axes[a].where);
      } else if (key == "nodes") {
        point.nodes = positiveInteger(value, key, grid.axes[a].where);
        if (static_cast<long long>(point.nodes) * ranksPerNode > kMostRanks)
          throw UsageError(grid.axes[a].where + ": nodes=" + value + " × --ranks-per-node " +
                           std::to_string(ranksPerNode) + " is more than " + std::to_string(kMostRanks) +
                           " ranks; give fewer nodes or ranks per node");
        point.worldSize = point.nodes * ranksPerNode;
      } else {
        point.trainFlags.insert(point.trainFlags.end(), {flagOf(key), value});
      }
    }
    // --mode dp: one process, which drives as many GPUs as the point's world says.
    for (const auto& [key, value] : point.settings)
      if (key == "mode" && value == dataParallelName()) {
        if (point.nodes > 0) refuseDataParallelOnNodes("--grid");
        point.processGpus = point.worldSize;
        point.worldSize = 1;
      }
    point.name = pointName(point.settings);
    const auto [it, inserted] = byName.emplace(point.name, points.size());
    if (!inserted)
      throw UsageError("two points would share the run directory '" + point.name + "' (values that differ only in "
                       "characters other than letters, digits, '.' and '+'); rename one of the values");
    points.push_back(std::move(point));
  }
  return points;
}

void checkLocalPlacement(const Grid& grid) {
  for (const GridAxis& axis : grid.axes) {
    if (axis.key != "nodes") continue;
    for (const std::string& value : axis.values)
      if (positiveInteger(value, axis.key, axis.where) > 1)
        throw UsageError(axis.where + ": nodes=" + value + " with --launcher local: the local launcher starts every rank "
                         "on this machine, so it cannot place ranks on " + value + " nodes; use --launcher slurm "
                         "(e.g. on the emulated cluster, experiments/cluster/cluster.sh), or world=N for N ranks here");
  }
}

void checkNumericAxis(const GridAxis& axis, bool wholeNumbers) {
  // long double holds every 64-bit integer exactly (--seed), and strtold reads what cxxopts reads:
  // decimal (leading zeros included), exponents, and 0x hexadecimal.
  std::vector<long double> numbers;
  for (const std::string& value : axis.values) {
    char* end = nullptr;
    errno = 0;
    const long double number = std::strtold(value.c_str(), &end);
    if (*end != '\0' || errno == ERANGE || !std::isfinite(number) || (wholeNumbers && number != std::floor(number)))
      throw UsageError(axis.where + ": " + axis.key + " takes " + (wholeNumbers ? "whole numbers" : "finite numbers") +
                       ", got '" + value + "'");
    for (size_t i = 0; i < numbers.size(); ++i)
      if (numbers[i] == number)
        throw UsageError(axis.where + ": " + axis.key + " lists " + axis.values[i] + " and " + value +
                         ", the same number; give each value once");
    numbers.push_back(number);
  }
}

void checkTrainFlags(const Grid& grid, const std::vector<std::string>& trainFlags) {
  const std::vector<std::pair<std::string, std::string>> owned = {
      {"--out", "the sweep gives every point its own --out DIR/<name>"},
      {"--rank", "the sweep starts the ranks (dtbench launch); use the grid key world"},
      {"--world-size", "the sweep starts the ranks (dtbench launch); use the grid key world"},
      {"--resume", "the sweep runs unfinished points again from the start"}};
  for (const std::string& word : trainFlags) {
    const std::string flag = word.substr(0, word.find('='));
    for (const auto& [name, why] : owned)
      if (flag == name) throw UsageError("train flag " + name + " after -- is set by the sweep: " + why);
    for (const GridAxis& axis : grid.axes) {
      const std::string gridFlag = flagOf(axis.key);
      if (!gridFlag.empty() && flag == gridFlag)
        throw UsageError("train flag " + gridFlag + " after -- is also the grid key '" + axis.key +
                         "'; give its values only in the grid");
    }
  }
}

}  // namespace dtbench::sweep
