#pragma once
// Impairment: network delay, rate limit and packet loss that dtbench injects into its own
// point-to-point layer (ImpairedPointToPoint), for clusters where nobody may touch the network
// (no root, no tc/nftables; experiments/impair/ does it for real where one may).
//
// Model, per message a rank sends (one at a time: one NIC per rank, store and forward):
//   hold = delay + bytes / rate + lost · rto
// where rate is in Gbit/s (10^9 bits), lost ~ Binomial(ceil(bytes / 1448), loss) counts the lost
// TCP segments of the message (1448 bytes of payload each), and every lost segment costs one
// retransmission timeout (Linux's minimum, 200 ms, by default): the pessimistic end of TCP's
// recovery, the one that dominated the published slowdown-under-loss figures. The sender holds
// the message that long, then sends it. The draws come from a generator seeded by (seed, rank), so
// a run's injected delays are reproducible.
// Worked example: 1 MB to a peer at --inject-delay-ms 1 --inject-rate-gbps 10 --inject-loss-pct 0.1:
// 1 ms + 8e6 bits / 1e10 bit/s = 1.8 ms, plus 200 ms for each of the ~0.69 segments (of 691) the
// binomial draw loses on average.

#include <cstdint>
#include <string>

namespace dtbench::comm {

struct Impairment {
  double delayMs = 0;      // --inject-delay-ms
  double rateGbps = 0;     // --inject-rate-gbps (0: no limit)
  double lossPercent = 0;  // --inject-loss-pct
  double rtoMs = 200;      // --inject-rto-ms: cost of one lost segment
  uint64_t seed = 0;

  static constexpr int64_t kSegmentBytes = 1448;

  bool active() const { return delayMs > 0 || rateGbps > 0 || lossPercent > 0; }
  // Seconds a message of `bytes` is held when `lostSegments` of its segments are lost.
  double holdSeconds(int64_t bytes, int64_t lostSegments) const;
  static int64_t segments(int64_t bytes) { return (bytes + kSegmentBytes - 1) / kSegmentBytes; }
};

// "" when valid, else what is wrong, naming the flag (negative values, loss > 100 %, rto <= 0).
std::string checkImpairment(const Impairment& impairment);

}  // namespace dtbench::comm
