#pragma once
// Clique all-reduce: every rank owns one shard and talks to every other rank directly (a complete
// graph; the "all-to-all" reduce-scatter + all-gather).
//
// Schedule: the tensor is cut into N chunks, rank r owns chunk r. Step 0 (reduce-scatter): every
// rank sends chunk j to rank j, for every j != r; rank j adds the N-1 pieces into its chunk.
// Step 1 (all-gather): every rank sends its summed chunk r to every other rank, which overwrites.
// Worked example, 3 ranks: step 0: 0->1 b, 0->2 c, 1->0 a, 1->2 c, 2->0 a, 2->1 b;
// step 1: 0->1 a, 0->2 a, 1->0 b, 1->2 b, 2->0 c, 2->1 c.
//
// Cost: 2 steps; each rank sends and receives 2(N-1)/N · S bytes like the ring, but over N-1 links
// at once (N(N-1) flows instead of N). Invariants tested: the edge set is complete (every ordered
// pair of distinct ranks); verifySchedule holds.

#include "comm/topology/schedule.h"

namespace dtbench::comm {

Schedule cliqueSchedule(int worldSize);

// The slice of cliqueSchedule(worldSize) that ranks [0, period) send (Schedule::slicePeriod); the
// clique repeats every rank. `period` must divide worldSize (std::invalid_argument otherwise).
Schedule cliqueSlice(int worldSize, int period);

}  // namespace dtbench::comm
