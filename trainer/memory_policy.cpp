#include "trainer/memory_policy.h"

#include <malloc.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace dtbench::trainer {

std::string applyMemoryPolicy() {
  const char* choice = std::getenv("DTBENCH_MALLOC");
  if (choice != nullptr && std::strcmp(choice, "system") == 0) return "glibc defaults (DTBENCH_MALLOC=system)";
  const bool ok = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  return ok ? "glibc, freed memory kept for reuse (M_MMAP_MAX=0, M_TRIM_THRESHOLD=INT_MAX)"
            : "glibc defaults (mallopt refused the policy)";
}

}  // namespace dtbench::trainer
