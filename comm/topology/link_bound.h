#pragma once
// LinkBound: the physical limit of an all-reduce on links of known rate (docs/cluster.md, "The
// bound"). Each host has one link with a rate in each direction (the emulated cluster shapes both
// ends of a node's veth to the same rate). A transfer between ranks of the same host never touches
// the link; one between hosts uses the sender's link up and the receiver's link down. One
// all-reduce therefore lasts at least
//
//     t_min = max over (host, direction) of  bytes crossing that link / its payload rate,
//
// where the bytes are the Schedule's own (scheduleTraffic, chunk rounding included) and the
// payload rate is what TCP can carry over the shaped link: R/8 × 1448/1514 bytes/s for a rate of R
// bit/s (full 1514-byte Ethernet frames carrying 1448 bytes of TCP payload with timestamps; tbf
// counts the Ethernet header, not preamble or FCS). Hence busbw ≤ busbw bytes / t_min, with busbw
// bytes = size × 2(N−1)/N. Dividing the busiest link's bytes by the busbw bytes gives the
// topology's "bytes per busbw byte" on its busiest link: 1 for a ring with one rank per host, N/2
// for a star (its hub receives N−1 whole tensors). `native` is held to the Schedule its backend's
// algorithm is modelled as (native_models.h: a ring over the ranks for gloo and nccl, a ring over
// the hosts for mpi on a power-of-two world), so that the bound, the step model and the calibration
// say the same of it. The least any all-reduce must move across the links is 2(M−1)/M × size on
// some host's link for M hosts, a ring over the hosts: with one rank per host every model moves
// that.
//
// The bound holds for sizes well above the tbf bucket (a burst drains at line rate); it ignores
// ACKs on the reverse direction and latency, so a measurement comes close to it only for large
// sizes. Used by `dtbench allreduce` (bound and ratio beside busbw) and by the report's Table 3.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/backends/backend.h"
#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

// TCP payload bytes per second that a link shaped to `bitsPerSecond` carries in full frames.
double linkPayloadRate(double bitsPerSecond);

// Bytes that cross each host's link for one all-reduce of `numel` elements of `elementBytes` each:
// up[h] = sent by host h's ranks to other hosts, down[h] = received by them from other hosts.
// Throws std::invalid_argument when `hosts` and the Schedule differ in world size, numel < 0 or
// elementBytes < 1.
struct HostLinkBytes {
  std::vector<int64_t> up, down;
};
HostLinkBytes hostLinkBytes(const Schedule& schedule, const HostLayout& hosts, int64_t numel, int64_t elementBytes);

// The busiest link is the one that sets t_min (with unequal rates not necessarily the one carrying
// the most bytes); among links that tie, the lowest host, and its up direction before its down one.
struct LinkBound {
  double minSeconds = 0;                    // t_min above; 0 when no byte crosses a link (one host)
  double busbwBytesPerSecond = 0;           // size × 2(N−1)/N / t_min; 0 when minSeconds is 0 (no bound)
  double busiestLinkBytesPerBusbwByte = 0;  // busiest link's bytes / (size × 2(N−1)/N); 0 without a bound
  int busiestHost = -1;                     // the host whose link sets t_min (-1 when none)
  bool busiestUp = false;                   // its direction: true = the host sending
};

// The bound of one all-reduce of `numel` elements over `hosts`, with `linkBitsPerSecond[h]` the
// rate of host h's link (both directions). Throws std::invalid_argument when there is not exactly
// one rate per host, a rate is not a positive finite number, or `hosts` and the Schedule differ in
// world size.
LinkBound linkBound(const Schedule& schedule, const HostLayout& hosts, int64_t numel, int64_t elementBytes,
                    const std::vector<double>& linkBitsPerSecond);

// The bound for `topology` by name; "native" is `backend`'s model (native_models.h).
LinkBound topologyLinkBound(const std::string& topology, Backend backend, const HostLayout& hosts, int64_t numel,
                            int64_t elementBytes, const std::vector<double>& linkBitsPerSecond);

}  // namespace dtbench::comm
