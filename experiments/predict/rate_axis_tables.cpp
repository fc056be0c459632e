#include "experiments/predict/rate_axis_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
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

// The most the band moves steps[c][v][w] either way: its reach.
double bandReach(const AxisPredictions& p, size_t c, size_t v, size_t w) {
  const PredictionBand band = axisBand(p, c, v, w);
  const double step = p.steps[c][v][w].stepS;
  return std::max(step - band.stepS.lo, band.stepS.hi - step);
}

// Whether the order of two configurations is certain given the band, and over which values of the axis
// their difference is within it (docs/predict.md, "A hardware number varied"). Both are predicted from
// the same input, so its uncertainty moves both steps alike: under the band's premise (the compute moved
// before backward) not their difference at all. Where compute lands inside backward instead it hides
// communication, moving each step by between 0 and its own change, so the difference a − b moves by at
// most the band's reach: the order is certain where |a − b| exceeds it.
struct OrderBand {
  std::optional<double> from, to;  // where |a − b| ≤ the reach around the crossing; none past the range's end
  bool certain = true;             // the order certain at the values the faster ones are read at
};

class PairAlongAxis {
 public:
  PairAlongAxis(const AxisPredictions& p, size_t a, size_t b, size_t w) : p_(p) {
    for (size_t v = 0; v < p.axis.values.size(); ++v) {
      difference_.push_back(p.steps[a][v][w].stepS - p.steps[b][v][w].stepS);
      reach_.push_back(std::max(bandReach(p, a, v, w), bandReach(p, b, v, w)));
    }
  }

  // Around a crossing (findCrossings).
  OrderBand around(const Crossing& c) const {
    const size_t first = indexOf(c.from), last = indexOf(c.to);
    OrderBand band;
    if (c.below != 0) {
      const size_t below = c.interpolated ? first : first - 1;
      band.certain = outside(below, c.below);
      band.from = lastBoundaryUpTo(c.below, c.interpolated ? c.to : c.from);
    }
    if (c.above != 0) {
      const size_t above = c.interpolated ? last : last + 1;
      band.certain = band.certain && outside(above, c.above);
      band.to = firstBoundaryFrom(c.above, c.interpolated ? c.from : c.to);
    }
    return band;
  }

  // Where one configuration is faster throughout (a − b of sign `s` at every value).
  OrderBand throughout(int s) const {
    OrderBand band;
    const size_t n = difference_.size();
    for (size_t v = 0; v < n; ++v) band.certain = band.certain && outside(v, s);
    if (band.certain) return band;
    const std::vector<Crossing> edges = boundaries(s);
    if (outside(0, s)) band.from = edges.front().at;
    if (outside(n - 1, s)) band.to = edges.back().at;
    return band;
  }

 private:
  bool outside(size_t v, int s) const { return s * difference_[v] > reach_[v]; }

  size_t indexOf(double value) const {
    const std::vector<double>& x = p_.axis.values;
    return static_cast<size_t>(std::find(x.begin(), x.end(), value) - x.begin());
  }

  // Where s·(a − b) meets the reach, interpolated on the axis's scale as the crossing is.
  std::vector<Crossing> boundaries(int s) const {
    std::vector<double> signedDifference;
    for (const double d : difference_) signedDifference.push_back(s * d);
    return findCrossings(p_.axis.values, signedDifference, reach_, p_.axis.scale);
  }

  std::optional<double> lastBoundaryUpTo(int s, double limit) const {
    std::optional<double> found;
    for (const Crossing& edge : boundaries(s))
      if (edge.at <= limit) found = edge.at;
    return found;
  }

  std::optional<double> firstBoundaryFrom(int s, double limit) const {
    for (const Crossing& edge : boundaries(s))
      if (edge.at >= limit) return edge.at;
    return std::nullopt;
  }

  const AxisPredictions& p_;
  std::vector<double> difference_, reach_;
};

Table axisTable(const AxisPredictions& p) {
  const std::string& key = p.axis.key;
  Table axis;
  axis.name = "rate_axis";
  axis.title = "The prediction along " + key + " (predicted)";
  axis.columns = {
      "N",      "nodes",  "what_if", key,          "step_s",        "compute_s",     "comm_exposed_s", "T_s",
      "T_lo_s", "T_hi_s", "speedup", "efficiency", "efficiency_lo", "efficiency_hi", "images_per_s",   "limit"};
  for (size_t w = 0; w < p.worlds.size(); ++w)
    for (size_t v = 0; v < p.axis.values.size(); ++v)
      for (size_t c = 0; c < p.configurations.size(); ++c) {
        const StepPrediction& s = p.steps[c][v][w];
        const PredictionBand band = axisBand(p, c, v, w);
        const double speedup = s.epochS > 0 ? p.baselines[c][v].epochS / s.epochS : 0;
        axis.rows.push_back({Cell::integral(s.world), Cell::integral(s.nodes), Cell::of(p.configurations[c]),
                             axisValueCell(p.axis.values[v]), Cell::seconds(s.stepS), Cell::seconds(s.computeS),
                             Cell::seconds(s.commExposedS), Cell::seconds(s.epochS), Cell::seconds(band.epochS.lo),
                             Cell::seconds(band.epochS.hi), Cell::ratio(speedup), Cell::ratio(speedup / s.world),
                             Cell::ratio(band.efficiency.lo), Cell::ratio(band.efficiency.hi),
                             Cell::ratio(s.imagesPerS), Cell::of(limitingTerm(stepTerms(s)))});
      }
  axis.notes = {
      "- `" + key +
          "`: the hardware file's number, set to each value in turn (the rest of the file as "
          "written); the other columns as Table 1's and the limits table's at that value: `step_s` the predicted "
          "step (compute, which includes the straggler term, + exposed communication), `T_s` = steps × step, "
          "`speedup` = T(1) / T(N) of the same configuration at the same value, `efficiency` = speedup / N, "
          "`limit` the largest term after compute.",
      "- `T_lo_s`…`T_hi_s`, `efficiency_lo`…`efficiency_hi`: Table 1's band at that value, from the input's own "
      "sampling uncertainty (its mean compute and its straggler term; docs/predict.md, \"The band\"); the varied "
      "number itself, like every number of the hardware file, has none.",
      "- `what_if`: the configuration, from the values listed in --compress and --topology; every other "
      "what-if flag applies to every row."};
  return axis;
}

Cell optionalValue(const std::optional<double>& v) { return v ? crossingCell(*v) : Cell::empty(); }

Table crossingsTable(const AxisPredictions& p) {
  const std::string& key = p.axis.key;
  Table crossings;
  crossings.name = "crossings";
  crossings.title = "Where the configurations' predicted steps cross along " + key;
  crossings.columns = {"N",         "nodes",   "what_if_a", "what_if_b", key, "where", "faster_below", "faster_above",
                       "band_from", "band_to", "certain"};
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
        const PairAlongAxis pair(p, i, j, w);
        const StepPrediction& first = p.steps[i][0][w];
        const std::string& la = p.configurations[i];
        const std::string& lb = p.configurations[j];
        const auto row = [&](Cell value, const std::string& where, Cell below, Cell above, const OrderBand& band) {
          crossings.rows.push_back({Cell::integral(first.world), Cell::integral(first.nodes), Cell::of(la),
                                    Cell::of(lb), std::move(value), Cell::of(where), std::move(below), std::move(above),
                                    optionalValue(band.from), optionalValue(band.to),
                                    Cell::of(band.certain ? "yes" : "no")});
        };
        const std::vector<Crossing> found = findCrossings(p.axis.values, a, b, p.axis.scale);
        if (found.empty()) {
          const int s = a.front() > b.front() ? 1 : -1;  // no zero and no sign change: one sign throughout
          row(Cell::empty(), "no crossing in the range " + range, faster(s, la, lb), faster(s, la, lb),
              pair.throughout(s));
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
              c.above != 0 ? faster(c.above, la, lb) : Cell::empty(), pair.around(c));
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
      "range's end); with no crossing in the range, the faster one throughout.",
      "- `band_from`…`band_to`: around the crossing, the values where the two steps differ by less than the "
      "band's reach (the most the band moves either step), interpolated as the crossing is: the crossing may lie "
      "anywhere in it (empty: past the range's end; with no crossing, where they could cross, if anywhere). Both "
      "steps come from the same input, whose uncertainty moves them alike, so this is where the band leaves their "
      "order open, not where their bands overlap (docs/predict.md, \"A hardware number varied\").",
      "- `certain`: yes where the two steps differ by more than the band's reach at the values `faster_below` and "
      "`faster_above` are read at (with no crossing: at every value), so that the band cannot change which is "
      "faster there; no where it could."};
  if (p.configurations.size() < 2)
    crossings.notes.push_back(
        "- One configuration: nothing to cross. List two or more in --compress or --topology, "
        "e.g. --compress none,fp16.");
  if (p.axis.values.size() < 2)
    crossings.notes.push_back("- One value: no crossing between values can be found; list several.");
  return crossings;
}

}  // namespace

AxisPredictions predictAlongAxis(const MeasuredStep& run, const Hardware& hardware, const RateAxis& axis,
                                 const std::vector<int>& worlds, const std::vector<AxisConfiguration>& configurations) {
  AxisPredictions p;
  p.axis = axis;
  p.worlds = worlds;
  p.hardware = hardware;
  std::vector<int64_t> bandWorlds = {1};
  for (const int world : worlds) bandWorlds.push_back(world);
  p.uncertainty = inputUncertainty(run, bandWorlds);
  for (const AxisConfiguration& configuration : configurations) {
    p.configurations.push_back(configuration.label);
    auto& steps = p.steps.emplace_back();
    auto& baselines = p.baselines.emplace_back();
    for (const double value : axis.values) {
      const Hardware varied = withAxisValue(hardware, axis.key, value);
      auto& byWorld = steps.emplace_back();
      for (const int world : worlds) byWorld.push_back(predictStep(run, varied, world, configuration.whatIf));
      baselines.push_back(predictStep(run, varied, 1, configuration.whatIf));
    }
  }
  return p;
}

PredictionBand axisBand(const AxisPredictions& p, size_t configuration, size_t value, size_t world) {
  const double computeScale = withAxisValue(p.hardware, p.axis.key, p.axis.values.at(value)).computeScale;
  return predictionBand(p.steps.at(configuration).at(value).at(world), p.baselines.at(configuration).at(value),
                        p.uncertainty, computeScale);
}

std::vector<Table> rateAxisTables(const AxisPredictions& p) {
  checkSizes(p);
  return {axisTable(p), crossingsTable(p)};
}

}  // namespace dtbench::predict
