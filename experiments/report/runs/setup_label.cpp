#include "experiments/report/runs/setup_label.h"

#include <cmath>
#include <cstdio>

#include "run/settings.h"

namespace dtbench::report {

std::string setupLabel(comm::Backend backend, const comm::Topology& topology, run::Sync sync, bool overlap,
                       double bucketMb, bool localBnStats) {
  std::string label =
      std::string(comm::name(backend)) + "/" + topology.name() + " " + run::syncNames().name(sync);
  const bool ssgd = sync == run::Sync::kSsgd;
  if (ssgd && !overlap) label += ", no overlap";
  if (ssgd && std::abs(bucketMb - run::kDefaultBucketMb) > 1e-9) {
    char text[48];
    std::snprintf(text, sizeof text, ", bucket %g MB", bucketMb);
    label += text;
  }
  if (localBnStats) label += ", local BN";
  return label;
}

}  // namespace dtbench::report
