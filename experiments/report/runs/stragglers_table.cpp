#include "experiments/report/runs/stragglers_table.h"

#include <optional>
#include <string>
#include <vector>

#include "experiments/report/runs/step_spread.h"

namespace dtbench::report {
namespace {

Cell secondsOrNone(const std::optional<double>& seconds) { return seconds ? Cell::seconds(*seconds) : Cell::empty(); }
Cell ratioOrNone(const std::optional<double>& ratio) { return ratio ? Cell::ratio(*ratio) : Cell::empty(); }

// p50, p99, CV %, the ranks' CV % and the gap's median and maximum of one quantity; all empty without it.
void addQuantityCells(std::vector<Cell>& cells, const std::optional<QuantitySpread>& spread, bool withSpike) {
  if (!spread) {
    cells.insert(cells.end(), withSpike ? 7 : 6, Cell::empty());
    return;
  }
  cells.push_back(Cell::seconds(spread->overall.p50));
  cells.push_back(Cell::seconds(spread->overall.p99));
  cells.push_back(ratioOrNone(spread->overall.cvPct));
  if (withSpike) cells.push_back(ratioOrNone(spread->overall.maxOverP50));
  cells.push_back(ratioOrNone(spread->rankCvPctP50));
  cells.push_back(secondsOrNone(spread->gapP50S));
  cells.push_back(secondsOrNone(spread->gapMaxS));
}

}  // namespace

Table stragglersTable(const RunSelection& selection) {
  Table table;
  table.name = "stragglers";
  table.title = "Stragglers — step-time spread across steps and ranks";
  table.columns = {"id",
                   "N",
                   "epoch",
                   "steps",
                   "step_p50_s",
                   "step_p99_s",
                   "step_cv_pct",
                   "step_max_over_p50",
                   "step_rank_cv_pct",
                   "step_gap_p50_s",
                   "step_gap_max_s",
                   "compute_p50_s",
                   "compute_p99_s",
                   "compute_cv_pct",
                   "compute_rank_cv_pct",
                   "compute_gap_p50_s",
                   "compute_gap_max_s",
                   "straggler_rank",
                   "straggler_share",
                   "last_to_finish_backward",
                   "noisy"};
  bool oneRank = false, untimed = false;
  for (const UsableRun& usable : selection.usable) {
    const RunData& run = *usable.run;
    std::vector<const run::StepRecord*> rows;
    for (const run::StepRecord& row : run.batches)
      if (row.epoch == usable.epoch.epoch) rows.push_back(&row);
    if (rows.empty()) continue;
    const StepSpread spread = stepSpread(rows, run.worldSize(), run.path + "/batches.csv");
    std::vector<Cell> cells = {Cell::of(run.id), Cell::integral(spread.ranks), Cell::integral(usable.epoch.epoch),
                               Cell::integral(spread.steps)};
    addQuantityCells(cells, spread.step, true);
    addQuantityCells(cells, spread.compute, false);
    cells.push_back(spread.stragglerRank ? Cell::integral(*spread.stragglerRank) : Cell::empty());
    cells.push_back(ratioOrNone(spread.stragglerShare));
    cells.push_back(Cell::of(spread.noStraggler.empty() ? describeLastToFinish(spread) : "n/a: " + spread.noStraggler));
    cells.push_back(Cell::of(spread.step.overall.noisyText()));
    table.rows.push_back(std::move(cells));
    oneRank = oneRank || spread.ranks < 2;
    untimed = untimed || !spread.compute;
  }
  table.notes = {
      "- Per usable run, over its chosen epoch's rows of every rank: `step` = step_s, `compute` = forward_s + "
      "backward_s. `_p50_s`, `_p99_s`: quantiles over every rank's every step (linear interpolation, numpy's "
      "default); `_cv_pct` = 100 · sample standard deviation / mean over the same; `step_max_over_p50` = the "
      "slowest step / p50.",
      "- Across ranks, per step: the gap = max − min over the ranks (`_gap_p50_s` its median over the steps, "
      "`_gap_max_s` its largest) and the ranks' CV % (`_rank_cv_pct`, its median over the steps).",
      "- `last_to_finish_backward`: per rank, the steps in which it alone had the largest data_s + h2d_s + "
      "forward_s + backward_s (the end of its backward, when its last gradients are ready for the others' "
      "all-reduce; `tied` counts steps where several ranks tied, within a nanosecond); `straggler_rank` is the rank last most often "
      "(the lowest on a tie) and `straggler_share` its steps / steps.",
      "- `noisy`, as nccl-tests flags a result: step_cv_pct above 5, or a step more than 1.5 × the p50 "
      "(step_max_over_p50 above 1.5); `no` otherwise."};
  if (oneRank)
    table.notes.push_back(
        "- A run of one rank has no rank-to-rank spread: its gaps, ranks' CV and straggler are empty (`n/a: one "
        "rank`), never 0.");
  if (untimed)
    table.notes.push_back(
        "- A run with --phase-timing none timed no forward or backward: its compute columns and straggler are "
        "empty (`n/a: phases not timed`).");
  return table;
}

}  // namespace dtbench::report
