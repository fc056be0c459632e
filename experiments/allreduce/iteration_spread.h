#pragma once
// How one size's timed all-reduces of `dtbench allreduce --timing each` vary from iteration to
// iteration (the per-iteration columns of docs/reference.md, "Bandwidth definitions"): iteration i's
// time is the slowest rank's time of its i-th all-reduce, max over ranks r of t[r][i]; the columns are
// the min, max, p99 and coefficient of variation of those iters values, and nccl-tests' noisy flags
// (common/sample_spread.h: CV above 5 %, or an iteration above 1.5x the median). `--timing loop`
// times the iterations as one interval and has no per-iteration times: its columns are empty.
//
// Worked example: 2 ranks, 3 iterations, rank 0 {10, 12, 11} us and rank 1 {11, 10, 20} us: the
// iterations' times are {11, 12, 20}; min 11, max 20, p50 12, p99 19.84, mean 14.33, sample sd
// 4.93, CV 34.4 %: noisy (CV above 5 %, and 20 > 1.5 x 12).

#include <vector>

#include "common/sample_spread.h"

namespace dtbench::experiments {

// `gathered` holds every rank's iteration times back to back, as an allgather of each rank's `iters`
// times lays them out: rank r's iteration i at [r * iters + i]. Returns the spread of the per-iteration
// maxima over the `world` ranks. Throws std::invalid_argument when world or iters is below 1, when
// gathered does not hold world x iters values, or when a time is negative or not finite.
common::SampleSpread iterationSpread(const std::vector<double>& gathered, int world, int iters);

}  // namespace dtbench::experiments
