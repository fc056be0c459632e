#include "run/step_jitter.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "common/split_mix64.h"
#include "common/usage_error.h"

namespace dtbench::run {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The first word of a SplitMix64 sequence started at x: (seed, rank, step) mixed through it give each
// draw a stream of its own.
uint64_t mixBits(uint64_t x) { return common::SplitMix64(x).next(); }

// A uniform draw in (0, 1) from 53 bits of `bits`: never 0 nor 1, so its logarithm is finite.
double openUnit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

std::string jitterUsage(const std::string& flag) {
  return flag + " takes none, normal:MEAN_MS:SD_MS (a normal delay, negative draws taken as 0) or exp:MEAN_MS (an "
         "exponential delay), in milliseconds, e.g. normal:30:10 or exp:30";
}

[[noreturn]] void refuseJitter(const std::string& flag, const std::string& text, const std::string& why) {
  throw common::UsageError(jitterUsage(flag) + "; got '" + text + "': " + why);
}

double millisecondsIn(const std::string& field, const char* what, const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = field.empty() ? NAN : std::strtod(field.c_str(), &end);
  if (field.empty() || end != field.c_str() + field.size() || !std::isfinite(value))
    refuseJitter(flag, text, std::string(what) + " '" + field + "' is not a finite number of milliseconds");
  return value;
}

std::string numberText(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string StepJitter::text() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kNormal: return "normal:" + numberText(meanMs) + ":" + numberText(sdMs);
    case Kind::kExponential: return "exp:" + numberText(meanMs);
  }
  return "none";
}

StepJitter StepJitter::parse(const std::string& text, const std::string& flag) {
  std::vector<std::string> fields;
  std::string::size_type from = 0;
  for (;;) {
    const std::string::size_type colon = text.find(':', from);
    fields.push_back(text.substr(from, colon == std::string::npos ? std::string::npos : colon - from));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  StepJitter jitter;
  const std::string& name = fields.front();
  if (name == "none" && fields.size() == 1) return jitter;
  if (name == "normal") {
    if (fields.size() != 3) refuseJitter(flag, text, "normal needs a mean and a standard deviation, normal:MEAN_MS:SD_MS");
    jitter.kind = Kind::kNormal;
    jitter.meanMs = millisecondsIn(fields[1], "the mean", flag, text);
    jitter.sdMs = millisecondsIn(fields[2], "the standard deviation", flag, text);
  } else if (name == "exp") {
    if (fields.size() != 2) refuseJitter(flag, text, "exp needs its mean alone, exp:MEAN_MS");
    jitter.kind = Kind::kExponential;
    jitter.meanMs = millisecondsIn(fields[1], "the mean", flag, text);
  } else {
    refuseJitter(flag, text, "unknown distribution '" + name + "'");
  }
  const std::string largest = numberText(kLargestStepJitterMs);
  if (!(jitter.meanMs > 0) || jitter.meanMs > kLargestStepJitterMs)
    refuseJitter(flag, text, "the mean must be > 0 and at most " + largest + " ms");
  if (jitter.sdMs < 0 || jitter.sdMs > kLargestStepJitterMs)
    refuseJitter(flag, text, "the standard deviation must be >= 0 and at most " + largest + " ms");
  return jitter;
}

double StepJitter::delayS(uint64_t seed, int64_t rank, int64_t globalStep) const {
  if (kind == Kind::kNone) return 0;
  const uint64_t stream =
      mixBits(mixBits(mixBits(seed) ^ static_cast<uint64_t>(rank)) ^ (static_cast<uint64_t>(globalStep) * 0xd1b54a32d192ed03ULL));
  const double u1 = openUnit(mixBits(stream)), u2 = openUnit(mixBits(stream ^ 0x632be59bd9b4e019ULL));
  double ms = 0;
  if (kind == Kind::kExponential) {
    ms = -meanMs * std::log(u1);
  } else {
    // Box–Muller: one standard normal from two uniforms.
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * kPi * u2);
    ms = std::max(0.0, meanMs + sdMs * z);
  }
  return ms / 1e3;
}

}  // namespace dtbench::run
