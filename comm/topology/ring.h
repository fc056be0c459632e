#pragma once
// Ring all-reduce: chunked, pipelined reduce-scatter followed by all-gather (baidu-allreduce).
//
// Schedule. The M ranks of the ring, in ring order m_0 .. m_{M-1}, each send to their successor
// m_{i+1 mod M} only. The tensor is cut into M chunks. Reduce-scatter, steps s = 0 .. M-2: position
// i sends chunk (i - s) mod M to position i+1, which adds it into its own chunk. All-gather, steps
// s = 0 .. M-2: position i sends chunk (i + 1 - s) mod M, which the successor overwrites.
//
// Worked example, 4 ranks, chunks a b c d (a_r = rank r's chunk a):
//   reduce-scatter step 0: 0->1 a, 1->2 b, 2->3 c, 3->0 d   rank 1 holds a0+a1, rank 2 b1+b2, ...
//   reduce-scatter step 1: 0->1 d, 1->2 a, 2->3 b, 3->0 c   rank 2 holds a0+a1+a2, ...
//   reduce-scatter step 2: 0->1 c, 1->2 d, 2->3 a, 3->0 b   rank 3 owns the full sum of a, rank 0 of
//                                                           b, rank 1 of c, rank 2 of d
//   all-gather step 0:     3->0 a, 0->1 b, 1->2 c, 2->3 d   (the full sums travel on, overwriting)
//   all-gather steps 1, 2: likewise, until every rank holds all four full sums.
// Every step moves one chunk per link on all links at once: that is the pipelining; each chunk
// moves to the next rank while the next chunk arrives from the previous one.
//
// Cost: 2(M-1) steps; each rank sends and receives 2(M-1)/M · S bytes for a tensor of S bytes
// (docs/reference.md, "Collective cost"), the bandwidth optimum. Invariants tested: the edges form
// one cycle through all M ranks; verifySchedule holds.
//
// The ring's factor 2(N-1)/N lives here once; every other place calls one of its three forms:
// ringBusFactor is the factor itself, nccl-tests' bus-bandwidth factor for all-reduce; ringBytesPerRank
// is what each rank sends per all-reduce of S bytes (⌊2(N-1)·S/N⌋, the bytes the traffic recorder and
// the report model for the backends' own all-reduce, which dtbench does not see); ringBusBandwidth is
// nccl-tests' bus bandwidth for all-reduce, algbw · 2(N-1)/N, which makes figures of different world
// sizes comparable (dtbench allreduce, Table 3, predict's bandwidth table, the link bound's busbw bytes,
// predict --calibrate's first guess).

#include <cstdint>
#include <vector>

#include "comm/topology/schedule.h"

namespace dtbench::comm {

// The ring over ranks 0 .. worldSize-1 in order.
Schedule ringSchedule(int worldSize);

// The ring's steps over `members` (in ring order), with the tensor cut into members.size() chunks:
// the building block that hierarchical.h runs across host leaders. With `positions` >= 0, only the
// transfers that the first `positions` members send (a slice: Schedule::slicePeriod).
std::vector<Step> ringSteps(const std::vector<int>& members, int positions = -1);

// The slice of ringSchedule(worldSize) that ranks [0, period) send (Schedule::slicePeriod): the
// ring repeats every rank. `period` must divide worldSize (std::invalid_argument otherwise).
Schedule ringSlice(int worldSize, int period);

// nccl-tests' bus-bandwidth factor for all-reduce (nccl-tests' doc/PERFORMANCE.md, "AllReduce"):
// busbw = algbw · 2(N-1)/N, because a ring all-reduce of S bytes sends and receives 2(N-1)/N · S bytes
// on every rank, the least any algorithm moves per rank; busbw is thus the rate each rank's link
// carries, comparable across N and with the link's own rate. 2(N-1)/N for N = worldSize; 0 for fewer
// than 2 ranks (one rank sends nothing).
double ringBusFactor(int worldSize);

// ⌊2(N-1)·bytes/N⌋ for N = worldSize (0 for one rank).
int64_t ringBytesPerRank(int64_t bytes, int worldSize);

// algbw · ringBusFactor(worldSize), in algbw's unit.
double ringBusBandwidth(double algbw, int worldSize);

}  // namespace dtbench::comm
