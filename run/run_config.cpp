#include "run/run_config.h"

#include <cmath>

namespace dtbench::run {

int64_t mibToBytes(double mib) { return static_cast<int64_t>(std::floor(mib * static_cast<double>(int64_t{1} << 20))); }

RunConfig resolveDefaults(RunConfig config) {
  OptimizerConfig& o = config.optimizer;
  if (o.lr < 0) o.lr = o.kind == OptimizerKind::kSgd ? kSgdLr : kAdaptiveLr;
  if (o.momentum < 0) o.momentum = o.kind == OptimizerKind::kSgd ? kSgdMomentum : kRmspropMomentum;
  if (config.data.dir.empty()) config.data.dir = defaultDataDir(config.data.dataset);
  config.impairment.seed = config.seed;
  return config;
}

}  // namespace dtbench::run
