#pragma once
// What limits scaling (docs/predict.md, "What limits scaling"): a predicted step split into terms that
// add up to it, and which of them limits. At world N:
//
//   step = compute + straggler + bandwidth + latency + codec + control
//
//   compute    the mean rank's compute (× compute_scale), what one rank alone takes;
//   straggler  what waiting for the slowest of N ranks adds (StepPrediction::stragglerS);
//   bandwidth  the exposed communication's bytes-over-bandwidth part, latency its per-message part
//              (α and the message overhead o), as the network model splits each collective
//              (network_model.h) and the step model apportions the exposed time (step_model.h);
//   codec      the exposed share of --compress's encoding and decoding on the communication thread;
//   control    the framework's control plane: what its waits to launch (a Horovod cycle,
//              control_plane.h) add to the exposed communication, the three terms above being the same
//              step's without them; 0 where the hardware file names no framework.
//
// The limiting term is the largest of the terms other than compute at that N (the first in the order
// above on a tie), "none" where all of them are 0: each term's share of the step is the fraction of
// the step it takes from compute, so the limit is what costs the most efficiency there.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/predict/step_model.h"
#include "experiments/report/report_table.h"

namespace dtbench::predict {

struct StepTerms {
  double computeS = 0, stragglerS = 0, bandwidthS = 0, latencyS = 0, codecS = 0, controlS = 0;

  double sumS() const { return computeS + stragglerS + bandwidthS + latencyS + codecS + controlS; }
};

StepTerms stepTerms(const StepPrediction& prediction);

// "straggler", "bandwidth", "latency", "codec" or "control": the largest term after compute; "none"
// where every one of them is 0.
std::string limitingTerm(const StepTerms& terms);

// The table `limits`: per world size (in `predictions`' order) every term in seconds and as a share
// of the step (%), the limiting term, and Table 1's efficiency (against `baseline`, world 1).
report::Table limitsTable(const std::vector<StepPrediction>& predictions, const StepPrediction& baseline);

// The figure's data (figures.json's "limits"): one entry per world size, its terms in seconds a step.
nlohmann::json limitsFigureEntries(const std::vector<StepPrediction>& predictions);

}  // namespace dtbench::predict
