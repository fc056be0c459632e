#include "experiments/predict/scaling_limits.h"

#include <utility>

namespace dtbench::predict {
namespace {

using report::Cell;

// The terms after compute, in the table's order (which also breaks a tie).
std::vector<std::pair<const char*, double>> nonComputeTerms(const StepTerms& t) {
  return {{"straggler", t.stragglerS}, {"bandwidth", t.bandwidthS}, {"latency", t.latencyS},
          {"codec", t.codecS},         {"control", t.controlS}};
}

}  // namespace

StepTerms stepTerms(const StepPrediction& p) {
  StepTerms t;
  t.computeS = p.computeS - p.stragglerS;
  t.stragglerS = p.stragglerS;
  t.bandwidthS = p.exposedBandwidthS;
  t.latencyS = p.exposedLatencyS;
  t.codecS = p.exposedCodecS;
  t.controlS = p.exposedControlS;  // what the framework's waits add (control_plane.h, step_model.h)
  return t;
}

std::string limitingTerm(const StepTerms& terms) {
  const char* limit = "none";
  double largest = 0;
  for (const auto& [name, seconds] : nonComputeTerms(terms))
    if (seconds > largest) {
      largest = seconds;
      limit = name;
    }
  return limit;
}

report::Table limitsTable(const std::vector<StepPrediction>& predictions, const StepPrediction& baseline) {
  report::Table t;
  t.name = "limits";
  t.title = "What limits scaling (predicted, seconds a step and shares of the step)";
  t.columns = {"N", "nodes", "step_s"};
  for (const char* term : {"compute", "straggler", "bandwidth", "latency", "codec", "control"})
    t.columns.push_back(std::string(term) + "_s");
  for (const char* term : {"compute", "straggler", "bandwidth", "latency", "codec", "control"})
    t.columns.push_back(std::string(term) + "_pct");
  t.columns.push_back("limit");
  t.columns.push_back("efficiency");
  for (const StepPrediction& p : predictions) {
    const StepTerms terms = stepTerms(p);
    const std::vector<double> seconds = {terms.computeS, terms.stragglerS, terms.bandwidthS,
                                         terms.latencyS, terms.codecS,     terms.controlS};
    // Microseconds in Markdown too: a latency term of a few µs is what a large world adds up.
    std::vector<Cell> row = {Cell::integral(p.world), Cell::integral(p.nodes), Cell::seconds(p.stepS).roundedTo(6)};
    for (const double s : seconds) row.push_back(Cell::seconds(s).roundedTo(6));
    for (const double s : seconds) row.push_back(Cell::ratio(p.stepS > 0 ? 100 * s / p.stepS : 0));
    row.push_back(Cell::of(limitingTerm(terms)));
    const double speedup = p.epochS > 0 ? baseline.epochS / p.epochS : 0;
    row.push_back(Cell::ratio(speedup / p.world));
    t.rows.push_back(row);
  }
  t.notes = {
      "- `step_s` = compute + straggler + bandwidth + latency + codec + control (seconds a step, the predicted "
      "step of Table 1's T); each `_pct` is that term's share of the step, so the shares add up to 100.",
      "- `compute_s`: the mean rank's compute; `straggler_s`: what waiting for the slowest of N ranks adds (the step "
      "breakdown's); `bandwidth_s` and `latency_s`: the communication not hidden behind backward, split as the "
      "network model splits each collective (bytes moving; only latencies and message overheads running) and "
      "apportioned by each collective's own parts; `codec_s`: the exposed encoding and decoding of --compress; "
      "`control_s`: the control plane: what the framework's wait to launch (a Horovod cycle) adds to the exposed "
      "communication, the other terms being the same step's without it; 0 where the hardware file names no framework.",
      "- `limit`: the largest term after compute (none: no term but compute). `efficiency` is Table 1's: about the "
      "compute share where every N runs whole batches; docs/predict.md, \"What limits scaling\"."};
  // What the hardware file's framework and collective library rows charged (absent rows: no line).
  if (!baseline.controlAssumed.empty()) t.notes.push_back("- control plane: " + baseline.controlAssumed + ".");
  std::string algorithms;
  for (const StepPrediction& p : predictions)
    if (p.libraryApplied)
      algorithms += (algorithms.empty() ? "" : "; ") + std::string("N=") + std::to_string(p.world) + " " +
                    (p.treeCollectives == 0   ? std::string("ring")
                     : p.ringCollectives == 0 ? std::string("tree")
                                              : "tree " + std::to_string(p.treeCollectives) + ", ring " +
                                                    std::to_string(p.ringCollectives));
  if (!algorithms.empty())
    t.notes.push_back("- all-reduce algorithm the collective library's cost model picked (buckets' all-reduces): " +
                      algorithms + ".");
  return t;
}

nlohmann::json limitsFigureEntries(const std::vector<StepPrediction>& predictions) {
  nlohmann::json entries = nlohmann::json::array();
  for (const StepPrediction& p : predictions) {
    const StepTerms t = stepTerms(p);
    entries.push_back({{"label", "N=" + std::to_string(p.world)},
                       {"N", p.world},
                       {"step_s", p.stepS},
                       {"compute_s", t.computeS},
                       {"straggler_s", t.stragglerS},
                       {"bandwidth_s", t.bandwidthS},
                       {"latency_s", t.latencyS},
                       {"codec_s", t.codecS},
                       {"control_s", t.controlS},
                       {"limit", limitingTerm(t)}});
  }
  return entries;
}

}  // namespace dtbench::predict
