#include "experiments/predict/rate_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "common/lists.h"
#include "common/usage_error.h"

namespace dtbench::predict {
namespace {

using common::UsageError;

// A key --vary takes and the range the hardware file allows it (hardware.cpp's checks).
struct AxisKey {
  const char* key;
  bool zeroAllowed;
  double most;
  AxisScale scale;
};

const std::vector<AxisKey>& axisKeys() {
  static const std::vector<AxisKey> keys = {
      {"inter_node.bandwidth_gbit_s", false, 1e6, AxisScale::kReciprocal},
      {"inter_node.latency_us", true, 1e9, AxisScale::kLinear},
      {"inter_node.message_overhead_us", true, 1e9, AxisScale::kLinear},
      {"intra_node.bandwidth_gbit_s", false, 1e6, AxisScale::kReciprocal},
      {"intra_node.latency_us", true, 1e9, AxisScale::kLinear},
      {"intra_node.message_overhead_us", true, 1e9, AxisScale::kLinear},
      {"compute_scale", false, 1e6, AxisScale::kLinear},
      {"link_rate_bps", false, 1e15, AxisScale::kLinear},
  };
  return keys;
}

const AxisKey* findAxisKey(const std::string& key) {
  for (const AxisKey& k : axisKeys())
    if (key == k.key) return &k;
  return nullptr;
}

const char* const kVaryExample = "e.g. --vary inter_node.bandwidth_gbit_s=1,10,25,100,400";

double axisValue(const std::string& word, const AxisKey& key, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string range = key.zeroAllowed ? "a number from 0" : "a number above 0";
  if (used != word.size() || word.empty() || !std::isfinite(v))
    throw UsageError("--vary '" + text + "': '" + word + "' is not a number; " + key.key + " takes " + range + ", " +
                     kVaryExample);
  if (v < 0 || (v == 0 && !key.zeroAllowed))
    throw UsageError("--vary '" + text + "': " + word + " is not a value of " + key.key + ", which takes " + range +
                     " (as the hardware file does)");
  if (v > key.most) {
    char most[32];
    std::snprintf(most, sizeof most, "%g", key.most);
    throw UsageError("--vary '" + text + "': " + word + " is beyond any link; " + key.key + " is at most " + most +
                     " (as in the hardware file)");
  }
  return v;
}

int signOf(double a, double b) {
  const double tolerance = 1e-9 * std::max(std::fabs(a), std::fabs(b));
  return a - b > tolerance ? 1 : b - a > tolerance ? -1 : 0;
}

}  // namespace

std::vector<std::string> rateAxisKeys() {
  std::vector<std::string> keys;
  for (const AxisKey& k : axisKeys()) keys.push_back(k.key);
  return keys;
}

RateAxis parseRateAxis(const std::string& text) {
  const size_t equals = text.find('=');
  const std::string keyText = text.substr(0, equals);
  const AxisKey* key = findAxisKey(keyText);
  if (!key)
    throw UsageError(
        "--vary '" + text + "': " + (keyText.empty() ? std::string("no key") : "no hardware number '" + keyText + "'") +
        "; --vary takes " + common::joinList(rateAxisKeys()) + " (the hardware file's keys), " + kVaryExample);
  if (equals == std::string::npos || equals + 1 == text.size())
    throw UsageError("--vary '" + text + "' gives no values: " + keyText + "=V1,V2,..., " + kVaryExample);
  RateAxis axis;
  axis.key = key->key;
  axis.scale = key->scale;
  const std::string list = text.substr(equals + 1);
  for (size_t start = 0;;) {
    // Split by hand: an empty entry ("1,,10", a trailing comma) is a mistake to name, not to skip.
    const size_t comma = list.find(',', start);
    const std::string word = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (word.empty()) throw UsageError("--vary '" + text + "' has an empty entry; " + kVaryExample);
    axis.values.push_back(axisValue(word, *key, text));
    if (axis.values.size() > kMostAxisValues)
      throw UsageError("--vary '" + text + "' lists more than " + std::to_string(kMostAxisValues) +
                       " values; each is a prediction at every world: list fewer");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(axis.values.begin(), axis.values.end());
  for (size_t i = 1; i < axis.values.size(); ++i)
    if (axis.values[i] == axis.values[i - 1]) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", axis.values[i]);
      throw UsageError("--vary '" + text + "' names " + value + " twice; name each value once");
    }
  return axis;
}

Hardware withAxisValue(const Hardware& hardware, const std::string& key, double value) {
  Hardware h = hardware;
  const auto link = [&](LinkClass& c, bool& overheadGiven, const std::string& field) {
    if (field == "bandwidth_gbit_s")
      c.bytesPerSecond = value * 1e9 / 8;
    else if (field == "latency_us")
      c.latencyS = value * 1e-6;
    else if (field == "message_overhead_us") {
      c.messageOverheadS = value * 1e-6;
      overheadGiven = true;
    } else {
      throw std::invalid_argument("withAxisValue: no link field '" + field + "'");
    }
  };
  if (key.rfind("inter_node.", 0) == 0)
    link(h.inter, h.interOverheadGiven, key.substr(11));
  else if (key.rfind("intra_node.", 0) == 0)
    link(h.intra, h.intraOverheadGiven, key.substr(11));
  else if (key == "compute_scale")
    h.computeScale = value;
  else if (key == "link_rate_bps")
    h.linkRateBps = value;
  else
    throw std::invalid_argument("withAxisValue: no hardware number '" + key + "'");
  return h;
}

std::vector<Crossing> findCrossings(const std::vector<double>& x, const std::vector<double>& a,
                                    const std::vector<double>& b, AxisScale scale) {
  if (a.size() != x.size() || b.size() != x.size())
    throw std::invalid_argument("findCrossings: " + std::to_string(x.size()) + " values but series of " +
                                std::to_string(a.size()) + " and " + std::to_string(b.size()));
  std::vector<int> sign(x.size());
  for (size_t i = 0; i < x.size(); ++i) sign[i] = signOf(a[i], b[i]);
  // The coordinate the two series are straight lines in (AxisScale).
  const auto u = [&](double v) { return scale == AxisScale::kReciprocal ? 1 / v : v; };
  std::vector<Crossing> found;
  for (size_t i = 0; i < x.size(); ++i) {
    if (sign[i] == 0) {
      size_t last = i;
      while (last + 1 < x.size() && sign[last + 1] == 0) ++last;
      Crossing c;
      c.at = c.from = x[i];
      c.to = x[last];
      c.below = i > 0 ? sign[i - 1] : 0;
      c.above = last + 1 < x.size() ? sign[last + 1] : 0;
      found.push_back(c);
      i = last;
      continue;
    }
    if (i + 1 < x.size() && sign[i + 1] == -sign[i]) {
      const double d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1];
      const double u0 = u(x[i]), u1 = u(x[i + 1]);
      Crossing c;
      c.interpolated = true;
      c.at = u(u0 + (u1 - u0) * d0 / (d0 - d1));  // 1/v is its own inverse
      c.from = x[i];
      c.to = x[i + 1];
      c.below = sign[i];
      c.above = sign[i + 1];
      found.push_back(c);
    }
  }
  return found;
}

}  // namespace dtbench::predict
