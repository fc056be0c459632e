#include "comm/impairment/impaired_point_to_point.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <utility>

namespace dtbench::comm {

ImpairedPointToPoint::ImpairedPointToPoint(PointToPoint& inner, const Impairment& impairment, HoldBounds bounds)
    : inner_(inner), impairment_(impairment), bounds_(std::move(bounds)) {
  std::seed_seq seed{static_cast<uint32_t>(impairment.seed), static_cast<uint32_t>(impairment.seed >> 32),
                     static_cast<uint32_t>(inner.rank()), 0x696d7061u};
  generator_.seed(seed);
}

WorkPtr ImpairedPointToPoint::send(const at::Tensor& tensor, int peer, int tag) {
  const auto bytes = static_cast<int64_t>(tensor.nbytes());
  int64_t lost = 0;
  if (impairment_.lossPercent > 0 && bytes > 0) {
    std::binomial_distribution<int64_t> losses(Impairment::segments(bytes), impairment_.lossPercent / 100.0);
    lost = losses(generator_);
  }
  double hold = impairment_.holdSeconds(bytes, lost);
  if (bounds_.timeout && hold * 1e3 >= static_cast<double>(bounds_.timeout->count())) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "rank %d: a send of %lld bytes to rank %d would be held %.3f s by the injected impairment "
                  "(--inject-delay-ms %g, --inject-rate-gbps %g, %lld lost segments at --inject-rto-ms %g), "
                  "not less than --timeout %.3f s: its receive would time out first. Lower the impairment or "
                  "raise --timeout",
                  rank(), static_cast<long long>(bytes), peer, hold, impairment_.delayMs, impairment_.rateGbps,
                  static_cast<long long>(lost), impairment_.rtoMs, static_cast<double>(bounds_.timeout->count()) / 1e3);
    throw CommError(text);
  }
  if (hold > 0) {
    // In slices, so that a stop signal ends the hold: the message then goes at once.
    using Clock = std::chrono::steady_clock;
    constexpr auto kSlice = std::chrono::milliseconds(20);
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(hold));
    for (auto now = start; now < end; now = Clock::now()) {
      if (bounds_.stopRequested && bounds_.stopRequested()) {
        hold = std::chrono::duration<double>(now - start).count();
        break;
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(end - now, kSlice));
    }
  }
  heldSeconds_ += hold;
  lostSegments_ += lost;
  return inner_.send(tensor, peer, tag);
}

}  // namespace dtbench::comm
