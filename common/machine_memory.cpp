#include "common/machine_memory.h"

#include <unistd.h>

#include <cstdio>

namespace dtbench::common {

std::optional<double> physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return std::nullopt;
  return static_cast<double>(pages) * static_cast<double>(pageSize);
}

std::string gibText(double bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%.4g GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace dtbench::common
