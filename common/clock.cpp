#include "common/clock.h"

#include <chrono>

namespace dtbench::common {

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace dtbench::common
