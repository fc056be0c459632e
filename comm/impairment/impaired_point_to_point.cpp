#include "comm/impairment/impaired_point_to_point.h"

#include <chrono>
#include <cstdint>
#include <thread>

namespace dtbench::comm {

ImpairedPointToPoint::ImpairedPointToPoint(PointToPoint& inner, const Impairment& impairment)
    : inner_(inner), impairment_(impairment) {
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
  const double hold = impairment_.holdSeconds(bytes, lost);
  if (hold > 0) std::this_thread::sleep_for(std::chrono::duration<double>(hold));
  heldSeconds_ += hold;
  lostSegments_ += lost;
  return inner_.send(tensor, peer, tag);
}

}  // namespace dtbench::comm
