#pragma once
// The setup a multi-rank run's table rows name ("gloo/ring ssgd, no overlap, bucket 5 MB"): its backend,
// topology and sync, then what of its synchronization is not the default. One function with one set of
// tests for what is default and left out, so that a measured run (the report, configuration.cpp) and a
// prediction of the same settings (predict's tables and figures) print the same label; each caller then
// adds only what it alone knows (the report: an injected impairment, the links' rates, a setting that
// differs among the runs; predict: the bucket layout, the compression, the gradients' bytes).

#include <string>

#include "comm/backends/backend.h"
#include "comm/topology/registry.h"
#include "run/run_config.h"

namespace dtbench::report {

// "BACKEND/TOPOLOGY SYNC", then in this order what is not the default:
//   ", no overlap"        ssgd without overlap (other syncs have no overlap to leave out);
//   ", bucket %g MB"      ssgd with a bucket cap other than run::kDefaultBucketMb (more than 1e-9 MiB
//                         away; other syncs have no buckets);
//   ", local BN"          --local-bn-stats (BatchNorm statistics not broadcast).
std::string setupLabel(comm::Backend backend, const comm::Topology& topology, run::Sync sync, bool overlap,
                       double bucketMb, bool localBnStats);

}  // namespace dtbench::report
