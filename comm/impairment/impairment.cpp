#include "comm/impairment/impairment.h"

namespace dtbench::comm {

double Impairment::holdSeconds(int64_t bytes, int64_t lostSegments) const {
  double seconds = delayMs / 1e3 + static_cast<double>(lostSegments) * rtoMs / 1e3;
  if (rateGbps > 0) seconds += static_cast<double>(bytes) * 8.0 / (rateGbps * 1e9);
  return seconds;
}

std::string checkImpairment(const Impairment& impairment) {
  // Longer than the longest --timeout (30 days) no hold can be: every message would time out.
  if (!(impairment.delayMs >= 0 && impairment.delayMs <= 2592000e3))
    return "--inject-delay-ms must be from 0 to 2592000000 (30 days, the longest --timeout)";
  if (!(impairment.rateGbps >= 0)) return "--inject-rate-gbps must be >= 0 (0: no limit)";
  if (!(impairment.lossPercent >= 0 && impairment.lossPercent < 100))
    return "--inject-loss-pct is a percentage in [0, 100)";
  if (!(impairment.rtoMs > 0)) return "--inject-rto-ms must be > 0";
  return "";
}

}  // namespace dtbench::comm
