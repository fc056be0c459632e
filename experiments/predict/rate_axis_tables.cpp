#include "experiments/predict/rate_axis_tables.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "experiments/predict/scaling_limits.h"

namespace dtbench::predict {
namespace {

using report::Cell;
using report::Table;

// A value of the axis as written: the decimals it needs (up to 6) in Markdown; CSV and JSON keep 4.
Cell axisValueCell(double v) {
  int decimals = 0;
  while (decimals < 6 && std::fabs(std::round(v * std::pow(10.0, decimals)) - v * std::pow(10.0, decimals)) > 1e-6)
    ++decimals;
  return Cell::ratio(v).roundedTo(decimals);
}

// An interpolated value: 3 significant digits in Markdown.
Cell crossingCell(double v) {
  const int decimals = v > 0 ? std::max(0, 2 - static_cast<int>(std::floor(std::log10(v)))) : 0;
  return Cell::ratio(v).roundedTo(decimals);
}

std::string shortValue(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

void checkSizes(const AxisPredictions& p) {
  const size_t values = p.axis.values.size(), worlds = p.worlds.size();
  bool ok = p.steps.size() == p.configurations.size() && p.baselines.size() == p.configurations.size();
  for (size_t c = 0; ok && c < p.steps.size(); ++c) {
    ok = p.steps[c].size() == values && p.baselines[c].size() == values;
    for (const auto& byWorld : p.steps[c]) ok = ok && byWorld.size() == worlds;
  }
  if (!ok)
    throw std::invalid_argument("rateAxisTables: the predictions do not cover every configuration, value and world");
}

}  // namespace

std::vector<Table> rateAxisTables(const AxisPredictions& p) {
  checkSizes(p);
  const std::string& key = p.axis.key;
  Table axis;
  axis.name = "rate_axis";
  axis.title = "The prediction along " + key + " (predicted)";
  axis.columns = {"N",       "nodes",      "what_if",      key,    "step_s", "compute_s", "comm_exposed_s", "T_s",
                  "speedup", "efficiency", "images_per_s", "limit"};
  for (size_t w = 0; w < p.worlds.size(); ++w)
    for (size_t v = 0; v < p.axis.values.size(); ++v)
      for (size_t c = 0; c < p.configurations.size(); ++c) {
        const StepPrediction& s = p.steps[c][v][w];
        const double speedup = s.epochS > 0 ? p.baselines[c][v].epochS / s.epochS : 0;
        axis.rows.push_back({Cell::integral(s.world), Cell::integral(s.nodes), Cell::of(p.configurations[c]),
                             axisValueCell(p.axis.values[v]), Cell::seconds(s.stepS), Cell::seconds(s.computeS),
                             Cell::seconds(s.commExposedS), Cell::seconds(s.epochS), Cell::ratio(speedup),
                             Cell::ratio(speedup / s.world), Cell::ratio(s.imagesPerS),
                             Cell::of(limitingTerm(stepTerms(s)))});
      }
  axis.notes = {
      "- `" + key +
          "`: the hardware file's number, set to each value in turn (the rest of the file as "
          "written); the other columns as Table 1's and the limits table's at that value: `step_s` the predicted "
          "step (compute, which includes the straggler term, + exposed communication), `T_s` = steps × step, "
          "`speedup` = T(1) / T(N) of the same configuration at the same value, `efficiency` = speedup / N, "
          "`limit` the largest term after compute.",
      "- `what_if`: the configuration, from the values listed in --compress and --topology; every other "
      "what-if flag applies to every row."};

  Table crossings;
  crossings.name = "crossings";
  crossings.title = "Where the configurations' predicted steps cross along " + key;
  crossings.columns = {"N", "nodes", "what_if_a", "what_if_b", key, "where", "faster_below", "faster_above"};
  const std::string range = shortValue(p.axis.values.front()) + " to " + shortValue(p.axis.values.back());
  // The faster of a and b where a − b has sign `s` (0: equal; none past the range's end).
  const auto faster = [](int s, const std::string& a, const std::string& b) {
    return Cell::of(s > 0 ? b : s < 0 ? a : "equal");
  };
  for (size_t w = 0; w < p.worlds.size(); ++w)
    for (size_t i = 0; i < p.configurations.size(); ++i)
      for (size_t j = i + 1; j < p.configurations.size(); ++j) {
        std::vector<double> a, b;
        for (size_t v = 0; v < p.axis.values.size(); ++v) {
          a.push_back(p.steps[i][v][w].stepS);
          b.push_back(p.steps[j][v][w].stepS);
        }
        const StepPrediction& first = p.steps[i][0][w];
        const std::string& la = p.configurations[i];
        const std::string& lb = p.configurations[j];
        const auto row = [&](Cell value, const std::string& where, Cell below, Cell above) {
          crossings.rows.push_back({Cell::integral(first.world), Cell::integral(first.nodes), Cell::of(la),
                                    Cell::of(lb), std::move(value), Cell::of(where), std::move(below),
                                    std::move(above)});
        };
        const std::vector<Crossing> found = findCrossings(p.axis.values, a, b, p.axis.scale);
        if (found.empty()) {
          const int s = a.front() > b.front() ? 1 : -1;  // no zero and no sign change: one sign throughout
          row(Cell::empty(), "no crossing in the range " + range, faster(s, la, lb), faster(s, la, lb));
          continue;
        }
        for (const Crossing& c : found) {
          std::string where;
          // Equal everywhere: no one value where they meet.
          const bool everywhere = !c.interpolated && c.from == p.axis.values.front() && c.to == p.axis.values.back();
          if (c.interpolated)
            where = "between " + shortValue(c.from) + " and " + shortValue(c.to);
          else if (everywhere)
            where = "equal over the whole range " + range;
          else if (c.from == c.to)
            where = "equal at " + shortValue(c.from);
          else
            where = "equal from " + shortValue(c.from) + " to " + shortValue(c.to);
          row(everywhere       ? Cell::empty()
              : c.interpolated ? crossingCell(c.at)
                               : axisValueCell(c.at),
              where, c.below != 0 ? faster(c.below, la, lb) : Cell::empty(),
              c.above != 0 ? faster(c.above, la, lb) : Cell::empty());
        }
      }
  crossings.notes = {
      std::string("- `") + key + "`: where `what_if_a`'s and `what_if_b`'s predicted steps are equal: interpolated " +
          (p.axis.scale == AxisScale::kReciprocal
               ? "linearly in 1 / value between the two neighbouring values where the faster one changes (a bandwidth "
                 "enters the step as bytes / bandwidth, so exposed communication is a straight line in 1 / value)"
               : "linearly in the value between the two neighbouring values where the faster one changes") +
          "; or a value where they are equal (within a relative 1e-9), or a run of them (`where`).",
      "- `faster_below`, `faster_above`: the faster configuration just below and just above it (empty past the "
      "range's end); with no crossing in the range, the faster one throughout."};
  if (p.configurations.size() < 2)
    crossings.notes.push_back(
        "- One configuration: nothing to cross. List two or more in --compress or --topology, "
        "e.g. --compress none,fp16.");
  if (p.axis.values.size() < 2)
    crossings.notes.push_back("- One value: no crossing between values can be found; list several.");
  return {axis, crossings};
}

}  // namespace dtbench::predict
