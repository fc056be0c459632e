#pragma once
// StepJitter: --inject-step-jitter, a seeded delay every rank adds to the compute of every step, drawn
// from a stated distribution, so that the ranks of a synchronous run wait for the slowest of them as
// ranks on uneven machines do (docs/predict.md, "The spread of the ranks' compute").
//
//   none                   no delay (the default)
//   normal:MEAN_MS:SD_MS   a normal draw of that mean and standard deviation, negative draws taken as 0
//   exp:MEAN_MS            an exponential draw of that mean (standard deviation = mean): a tail heavier
//                          than the normal's, whose expected maximum over N ranks grows by ln 2 × MEAN
//                          for every doubling of N
//
// The delay of rank r in its global step s is a pure function of (the run's --seed, r, s): the ranks
// draw differently, a rerun (and a resumed run) draws the same. The trainer sleeps it at the end of the
// forward phase (trainer/step/train_step.cpp), so batches.csv counts it in forward_s and in the step's
// compute, and every gradient of the delayed rank becomes ready that much later.
//
// No LibTorch: the report and predict read it back from config.json (run/config_schema.h).

#include <cstdint>
#include <string>

namespace dtbench::run {

// The largest mean or standard deviation accepted, in milliseconds: a minute.
inline constexpr double kLargestStepJitterMs = 60000;

struct StepJitter {
  enum class Kind { kNone, kNormal, kExponential };
  Kind kind = Kind::kNone;
  double meanMs = 0;  // normal: the mean before negative draws are taken as 0; exp: the mean
  double sdMs = 0;    // normal only

  bool active() const { return kind != Kind::kNone; }

  // As the flag and config.json write it: "none", "normal:20:5", "exp:20".
  std::string text() const;

  // Reads `text` as above. Throws common::UsageError naming `flag`, the value and what to write instead:
  // an unknown distribution, a missing or extra field, a value that is not a finite number, a mean that
  // is not > 0, a standard deviation < 0, either above kLargestStepJitterMs.
  static StepJitter parse(const std::string& text, const std::string& flag = "--inject-step-jitter");

  // The delay in seconds of `rank` in its global step `globalStep` (1-based) of a run seeded `seed`; 0
  // for none.
  double delayS(uint64_t seed, int64_t rank, int64_t globalStep) const;
};

}  // namespace dtbench::run
