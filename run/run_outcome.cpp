#include "run/run_outcome.h"

#include <stdexcept>

namespace dtbench::run {

const RunOutcomeFacts& factsOf(RunOutcome outcome) {
  for (const RunOutcomeFacts& facts : kRunOutcomes)
    if (facts.outcome == outcome) return facts;
  throw std::logic_error("a run outcome without its row in kRunOutcomes");
}

std::optional<RunOutcome> findRunOutcome(const std::string& name) {
  for (const RunOutcomeFacts& facts : kRunOutcomes)
    if (name == facts.name) return facts.outcome;
  return std::nullopt;
}

std::string runOutcomeNames() {
  std::string names;
  for (const RunOutcomeFacts& facts : kRunOutcomes) names += (names.empty() ? "" : ", ") + std::string(facts.name);
  return names;
}

std::string outcomeText(const std::optional<RunOutcome>& outcome) {
  return outcome ? factsOf(*outcome).name : "unknown";
}

bool isComplete(const std::optional<RunOutcome>& outcome) { return outcome && factsOf(*outcome).complete; }

bool isContinuable(const std::optional<RunOutcome>& outcome) { return outcome && factsOf(*outcome).continuable; }

}  // namespace dtbench::run
