#pragma once
// The axis of `dtbench predict --vary KEY=V1,V2,...` (docs/predict.md, "A hardware number varied"):
// one number of the hardware file, named by its JSON key, set to each of a list of values in turn, and
// where two configurations' predicted steps cross along it. "When does compression pay?" is the
// inter-node bandwidth at which a compressed step and an uncompressed one take the same time.

#include <string>
#include <vector>

#include "experiments/predict/hardware.h"

namespace dtbench::predict {

// At most this many values on one axis: each is a prediction at every world and configuration.
inline constexpr size_t kMostAxisValues = 64;

// How a crossing between two sampled values is interpolated. A bandwidth enters the step as bytes /
// bandwidth, so along it step times are straight lines in 1 / value (exact where the communication is
// exposed, whatever the spacing of the values); a latency, a message overhead or the compute scale
// enters as itself: straight lines in the value.
enum class AxisScale { kLinear, kReciprocal };

struct RateAxis {
  std::string key;             // the hardware file's spelling, e.g. "inter_node.bandwidth_gbit_s"
  std::vector<double> values;  // increasing, no value twice
  AxisScale scale = AxisScale::kLinear;
};

// The keys --vary takes, in the order its messages list them.
std::vector<std::string> rateAxisKeys();

// "KEY=V1,V2,...": the values sorted increasing. Throws common::UsageError naming --vary for a key
// outside rateAxisKeys() (listing them), no '=', an empty list or entry, a value that is not a
// number, one the hardware file would refuse for that key (a bandwidth or scale not above 0, a
// latency or overhead below 0, beyond the file's limit), a value given twice, or more than
// kMostAxisValues values.
RateAxis parseRateAxis(const std::string& text);

// `hardware` with the number `key` set to `value` (in the file's units: Gbit/s, microseconds, bit/s or
// a factor) and nothing else changed; a message overhead set this way counts as given. Throws
// std::invalid_argument for a key outside rateAxisKeys().
Hardware withAxisValue(const Hardware& hardware, const std::string& key, double value);

// Where a − b changes sign or is 0 along `x` (increasing): one entry per sign change between two
// neighbouring values (interpolated on `scale` between them) and one per run of values where the two
// are equal (within a relative 1e-9: a step whose communication is hidden either way is the same step).
struct Crossing {
  double at = 0;              // the interpolated value, or the first value of an equal run
  bool interpolated = false;  // between `from` and `to`; else equal at the sampled values from..to
  double from = 0, to = 0;
  int below = 0, above = 0;  // sign of a − b just below and just above (0: the range ends there)
};
std::vector<Crossing> findCrossings(const std::vector<double>& x, const std::vector<double>& a,
                                    const std::vector<double>& b, AxisScale scale);

}  // namespace dtbench::predict
