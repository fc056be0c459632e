// The walk a rank takes over a Schedule (comm/topology/schedule_walk.h): the order of its actions, and
// the plan's receives ahead. The executor's order on a real transport: test_schedule_executor.cpp [order].
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology/schedule_walk.h"

using dtbench::comm::ScheduleWalk;
using dtbench::comm::ScheduleWalker;
using dtbench::comm::WalkAction;

namespace {

// "R0.1" posts the receives of item (0, 1), "A" the receives ahead, "S" the sends, "C" completes.
std::vector<std::string> actions(size_t steps, int segments, ScheduleWalk walk) {
  std::vector<std::string> out;
  ScheduleWalker walker(steps, segments, walk);
  WalkAction a;
  while (walker.next(a)) {
    const char* kind = a.kind == WalkAction::Kind::kPostReceivesAhead ? "A"
                       : a.kind == WalkAction::Kind::kPostReceives    ? "R"
                       : a.kind == WalkAction::Kind::kPostSends       ? "S"
                                                                      : "C";
    out.push_back(kind + std::to_string(a.step) + "." + std::to_string(a.segment));
  }
  return out;
}

}  // namespace

TEST_CASE("Step by step: the first step posted at once, then items in (step, segment) order", "[walk]") {
  CHECK(actions(2, 2, ScheduleWalk::kStepByStep) ==
        std::vector<std::string>{"R0.0", "S0.0", "R0.1", "S0.1", "C0.0", "R1.0", "S1.0", "C0.1", "R1.1", "S1.1",
                                 "C1.0", "C1.1"});
}

TEST_CASE("Both directions: receives ahead, a window of two first-step segments, diagonal order", "[walk]") {
  CHECK(actions(2, 3, ScheduleWalk::kBothDirections) ==
        std::vector<std::string>{"A0.0", "A0.1", "A0.2", "A1.0", "A1.1", "A1.2",  // every item's receives ahead
                                 "R0.0", "R0.1", "R0.2", "S0.0", "S0.1",          // the first step, window 2
                                 "C0.0", "S0.2", "R1.0", "S1.0",                  // diagonal 0
                                 "C0.1", "R1.1", "S1.1", "C1.0",                  // diagonal 1
                                 "C0.2", "R1.2", "S1.2", "C1.1",                  // diagonal 2
                                 "C1.2"});
  CHECK(actions(0, 3, ScheduleWalk::kBothDirections).empty());
}

TEST_CASE("Every walk completes each item once, after posting it, and a segment's steps in order", "[walk]") {
  for (const ScheduleWalk walk : {ScheduleWalk::kBothDirections, ScheduleWalk::kStepByStep})
    for (size_t steps : {1, 2, 5})
      for (int segments : {1, 2, 3, 7}) {
        INFO("steps " << steps << ", segments " << segments << ", walk " << static_cast<int>(walk));
        std::map<std::pair<size_t, int>, std::map<char, int>> seen;  // item -> kind -> position
        int position = 0;
        for (const std::string& a : actions(steps, segments, walk)) {
          const size_t dot = a.find('.');
          const std::pair<size_t, int> item{std::stoul(a.substr(1, dot - 1)), std::stoi(a.substr(dot + 1))};
          CHECK(seen[item].count(a[0]) == 0);  // once each
          seen[item][a[0]] = position++;
        }
        REQUIRE(seen.size() == steps * static_cast<size_t>(segments));
        for (const auto& [item, kinds] : seen) {
          REQUIRE(kinds.count('R'));
          REQUIRE(kinds.count('S'));
          REQUIRE(kinds.count('C'));
          CHECK(kinds.at('R') < kinds.at('C'));
          CHECK(kinds.at('S') < kinds.at('C'));
          CHECK(kinds.count('A') == (walk == ScheduleWalk::kBothDirections ? 1u : 0u));
          if (item.first > 0) CHECK(seen.at({item.first - 1, item.second}).at('C') < kinds.at('R'));
        }
      }
}

TEST_CASE("The plan posts a tree's broadcast and the root's first adds ahead, across hosts only", "[walk]") {
  const auto tree = dtbench::comm::makeSchedule("tree", dtbench::comm::hostsFromRanksPerHost(2, 1));
  // Rank 1 (the leaf) reduces up in step 0 and receives the broadcast in place in step 1.
  const auto across = dtbench::comm::makeSchedulePlan(tree, 1, 1000, 4, ScheduleWalk::kBothDirections);
  const auto within = dtbench::comm::makeSchedulePlan(tree, 1, 1000, 4, ScheduleWalk::kStepByStep);
  REQUIRE(across.items.size() == 2);
  for (int g = 0; g < 4; ++g) {
    REQUIRE(across.items[1][g].incoming.size() == 1);
    CHECK(across.items[1][g].incoming[0].ahead);
    CHECK_FALSE(across.items[1][g].incoming[0].inWorkspace);
    CHECK_FALSE(within.items[1][g].incoming[0].ahead);
    CHECK(across.items[0][g].outgoing.size() == 1);
  }
  // The root adds the leaf's segments in its workspace: the first use of each segment's region, so
  // posted ahead as well (the region is the item's until it is applied).
  const auto root = dtbench::comm::makeSchedulePlan(tree, 0, 1000, 4, ScheduleWalk::kBothDirections);
  for (int g = 0; g < 4; ++g) {
    REQUIRE(root.items[0][g].incoming.size() == 1);
    CHECK(root.items[0][g].incoming[0].inWorkspace);
    CHECK(root.items[0][g].incoming[0].ahead);
  }
  CHECK(root.workspace == 1000);  // four regions of 250 elements
}

TEST_CASE("A receive into the workspace is ahead only as its segment's first use of it", "[walk]") {
  // Ring of 3: the reduce-scatter's two steps both add into the workspace: only the first is ahead;
  // the all-gather lands in place, from the peer this rank sent nothing to: not ahead.
  const auto ring = dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(3, 1));
  const auto plan = dtbench::comm::makeSchedulePlan(ring, 1, 3000, 2, ScheduleWalk::kBothDirections);
  REQUIRE(plan.items.size() == 4);
  for (int g = 0; g < 2; ++g) {
    CHECK(plan.items[0][g].incoming.at(0).ahead);
    CHECK_FALSE(plan.items[1][g].incoming.at(0).ahead);
    CHECK_FALSE(plan.items[2][g].incoming.at(0).ahead);
    CHECK_FALSE(plan.items[3][g].incoming.at(0).ahead);
  }
  // Tree of 4 (parent(r) = (r - 1) / 2): the root's first receives come at a later step than the
  // first, and are still its segments' first use of the workspace.
  const auto tree = dtbench::comm::makeSchedule("tree", dtbench::comm::hostsFromRanksPerHost(4, 1));
  const auto root = dtbench::comm::makeSchedulePlan(tree, 0, 4000, 2, ScheduleWalk::kBothDirections);
  int aheadAddsAfterFirstStep = 0;
  for (size_t s = 1; s < root.items.size(); ++s)
    for (const auto& in : root.items[s][0].incoming) aheadAddsAfterFirstStep += in.inWorkspace && in.ahead;
  CHECK(aheadAddsAfterFirstStep == 2);  // from ranks 1 and 2
}

namespace {

bool overlap(const dtbench::comm::ElementRange& a, const dtbench::comm::ElementRange& b) {
  return a.begin < b.end && b.begin < a.end;
}

// The rule of Note [Walking a Schedule] written out message by message, O(n²): the plan's indexed
// answers must equal it (a clique over 12 or 16 ranks has items of more messages than are scanned
// in place, so both ways of answering are checked).
void checkAgainstBruteForce(const dtbench::comm::SchedulePlan& plan) {
  using dtbench::comm::PlannedMessage;
  std::vector<std::map<int, size_t>> lastSendTo(plan.segments);
  std::vector<bool> workspaceUsed(plan.segments, false);
  for (size_t s = 0; s < plan.items.size(); ++s) {
    std::map<int, bool> ahead;
    for (int g = 0; g < plan.segments; ++g) {
      const auto& item = plan.items[s][g];
      for (const PlannedMessage& in : item.incoming) {
        bool inWorkspace = in.transfer->reduce;
        for (const PlannedMessage& out : item.outgoing) inWorkspace = inWorkspace || overlap(in.range, out.range);
        CHECK(in.inWorkspace == inWorkspace);
        const int peer = in.transfer->src;
        const auto found = lastSendTo[g].find(peer);
        const size_t last = found == lastSendTo[g].end() ? 0 : found->second;
        bool may = inWorkspace ? !workspaceUsed[g] : last > 0;
        for (size_t t = last == 0 ? s : last - 1; may && !inWorkspace && t < s; ++t) {
          for (const PlannedMessage& out : plan.items[t][g].outgoing)
            if (overlap(out.range, in.range) && out.transfer->dst != peer) may = false;
          for (const PlannedMessage& other : plan.items[t][g].incoming)
            if (overlap(other.range, in.range)) may = false;
        }
        const auto [it, inserted] = ahead.emplace(peer, true);
        it->second = it->second && may;
      }
    }
    for (int g = 0; g < plan.segments; ++g) {
      for (const PlannedMessage& in : plan.items[s][g].incoming) {
        CHECK(in.ahead == ahead.at(in.transfer->src));
        if (in.inWorkspace) workspaceUsed[g] = true;
      }
      for (const PlannedMessage& out : plan.items[s][g].outgoing) lastSendTo[g][out.transfer->dst] = s + 1;
    }
  }
}

}  // namespace

TEST_CASE("The plan's receives ahead and workspace flags are the rule's, for every topology", "[walk]") {
  for (const std::string& name : dtbench::comm::topologyNames()) {
    if (name == "native") continue;
    for (const auto& [world, perHost] : std::vector<std::pair<int, int>>{{2, 1}, {4, 1}, {5, 1}, {6, 2}, {8, 4}, {9, 3}, {12, 1}, {16, 4}})
      for (int segments : {1, 3}) {
        INFO(name << " over " << world << " ranks, " << perHost << " per host, " << segments << " segments");
        const auto schedule = dtbench::comm::makeSchedule(name, dtbench::comm::hostsFromRanksPerHost(world, perHost));
        for (int rank = 0; rank < world; ++rank)
          checkAgainstBruteForce(
              dtbench::comm::makeSchedulePlan(schedule, rank, 1009, segments, ScheduleWalk::kBothDirections));
      }
  }
}
