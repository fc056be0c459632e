#pragma once
// The distributions of a job trace's GPU jobs (docs/report.md, "Job traces"): CDFs of duration
// (by count and weighted by GPU time) and of queueing delay at given points, and the job-size
// classes 1, 2–4, 5–8 and >8 GPUs.
//
// Worked example: GPU jobs of 10 s × 1 GPU, 30 s × 2 GPUs and 100 s × 4 GPUs (GPU time 10, 60 and
// 400 s, 470 s in all). At x = 50 s: count CDF = 2/3 = 0.67 (two jobs no longer than 50 s), GPU-time
// CDF = (10 + 60) / 470 = 0.15. At x = 100 s both are 1.

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/report/jobs/job_trace.h"

namespace dtbench::report {

// 1, 2, 5, 10, 20, 50, ... from `first` (1 s; 0 adds a leading 0) up to the first point ≥ `max`.
std::vector<double> logPoints(double max, bool withZero);
// `perDecade` points per decade from 1 s up to the first ≥ max (the figures' finer curves), 0 first
// when `withZero`.
std::vector<double> finePoints(double max, int perDecade, bool withZero);

struct CdfPoint {
  double x = 0;
  int64_t jobs = 0;         // jobs with value ≤ x
  double share = 0;         // jobs / all jobs
  double gpuTimeShare = 0;  // GPU time of those jobs / all GPU time (NaN when there is none)
};

// Count and GPU-time CDF of the GPU jobs' durations at `points` (ascending).
std::vector<CdfPoint> durationCdf(const JobTrace& trace, const std::vector<double>& points);
// Count CDF of the queueing delays (jobs with a submit time) at `points` (ascending).
std::vector<CdfPoint> queueDelayCdf(const JobTrace& trace, const std::vector<double>& points);
double longestDuration(const JobTrace& trace);
double longestQueueDelay(const JobTrace& trace);

// Job-size classes: 0 = 1 GPU, 1 = 2–4, 2 = 5–8, 3 = >8.
constexpr int kSizeClasses = 4;
int sizeClass(int32_t gpus);
const char* sizeClassName(int size);  // "1", "2-4", "5-8", ">8"

}  // namespace dtbench::report
