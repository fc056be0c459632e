#pragma once
// probeGemm: the CPU's matrix-product rate, the denominator of a CPU run's "fraction of the measured
// GEMM rate" (a CPU has no datasheet peak; docs/report.md, "FLOPs and the speed of light"): square
// fp32 products (at::mm) on this thread's intra-op threads (the run's), one untimed, then timed ones
// for at most kProbeBudgetS, the best rate kept. Measured once per host boot, thread count and size,
// cached as JSON in <cache>/gemm-probe/ (<cache>: DTBENCH_CACHE_DIR, else $XDG_CACHE_HOME/dtbench, else
// ~/.cache/dtbench, as scripts/deps_paths.sh names it); a cache that cannot be read or written is
// measured again, never an error. The trainer probes before the first step, outside the timed steps.

#include <cstdint>
#include <optional>
#include <string>

#include "run/speed_of_light.h"

namespace dtbench::trainer {

constexpr double kProbeBudgetS = 0.15;  // the timed products; with the untimed one, at most about 0.2 s
constexpr int64_t kProbeSize = 512;

// `cacheDirectory` "" measures without a cache; `bootId` keys the cache (a reboot measures again).
run::GemmProbe probeGemm(const std::string& cacheDirectory, const std::string& bootId);

// <cache>/gemm-probe by the environment's rule above; nullopt without HOME or a cache variable.
std::optional<std::string> gemmProbeCacheDirectory();

}  // namespace dtbench::trainer
