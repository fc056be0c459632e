#include "common/clock.h"

#include <chrono>
#include <cmath>
#include <ctime>

namespace dtbench::common {

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string utcText(double unix) {
  if (!std::isfinite(unix)) return "";
  const std::time_t t = static_cast<std::time_t>(std::floor(unix));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace dtbench::common
