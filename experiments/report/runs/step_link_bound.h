#pragma once
// StepLinkBound: the least time one training step's gradient all-reduces can take on the links of a
// run whose config.json has `link_rate_bps` (the emulated cluster: each host's link rate in bit/s),
// for Table 3's link_bound_busbw_GBps and of_link_bound (docs/report.md).
//
// Per bucket b (config.json's bucket_elements and bucket_dtypes), comm::topologyLinkBound over the
// run's HostLayout (comm::hostsFromNames of `hosts`) and the rates of those hosts gives the least
// seconds of that bucket's all-reduce: its busiest link's bytes over the link's TCP payload rate
// (comm/topology/link_bound.h). With --ranks-per-host K (hosts_emulated) the topology's schedule
// is the one the run used, over the emulated hosts, and its bytes are charged to the links of the
// real hosts (comm::linkBound of that schedule over hostsFromNames). The buckets share the links, so the step's all-reduces take at
// least T = Σ_b minSeconds(b), and the step's busbw, as Table 3 defines it (S × 2(N−1)/N per
// second, S = the step's bytes over every bucket), is at most S × 2(N−1)/N / T.
//
// Worked example: star over 4 ranks on hosts [node1, node1, node2, node2], node1 at 1 Gbit/s,
// node2 at 0.5 Gbit/s. The hub (rank 0, node1) receives S from ranks 2 and 3 across the links and
// sends S back to each: node2's link carries 2S up and 2S down, node1's the same; node2's is the
// slower, payload rate p = 0.5e9 / 8 × 1448/1514 = 59,775,429 B/s, so T = 2S / p for any buckets
// and the bound is 1.5 S / T = 0.75 p = 44,831,572 B/s, 0.0448 GB/s.
//
// No bound (available false; `why` says why in words, "" when there is nothing worth a remark):
// no link_rate_bps (or null), no all-reduce model (pair averaging), a host whose rate is null,
// missing or not positive, all ranks on one real host (no byte crosses a link), or a topology the
// bound cannot name.

#include <string>

#include "experiments/report/runs/allreduce_model.h"
#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

struct StepLinkBound {
  bool available = false;
  std::string why;                 // when not available
  double minSeconds = 0;           // T = Σ_b minSeconds(b)
  double busbwBytesPerSecond = 0;  // S × 2(N−1)/N / T
};

// `model` is allreduceModel(run) (not available: no bound).
StepLinkBound stepLinkBound(const RunData& run, const AllreduceModel& model);

}  // namespace dtbench::report
