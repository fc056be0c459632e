#pragma once
// ImpairedPointToPoint: a PointToPoint that forwards to another after holding every send for the
// time the Impairment model gives it (comm/impairment/impairment.h); receives are forwarded at once (their
// completion waits for the held send). Used under the point-to-point topologies and pair exchanges,
// where dtbench moves the bytes itself; a backend's own collectives (--topology native) cannot be
// impaired this way.
// Contract: PointToPoint's; the inner object outlives this one. Keeps the total time it held sends.
// A hold is bounded (HoldBounds): one longer than the communicator's --timeout is refused at once with
// a CommError that names both (the receiver would time out first, after waiting for nothing), and the
// run's stop signal (SIGTERM, Ctrl-C) ends a hold early: the message goes, the step ends, and the run
// stops at the step's boundary as it does unimpaired.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>

#include "comm/impairment/impairment.h"
#include "comm/point_to_point.h"
#include "comm/work.h"

namespace dtbench::comm {

struct HoldBounds {
  std::optional<std::chrono::milliseconds> timeout;  // the communicator's --timeout; none: unbounded
  std::function<bool()> stopRequested;               // the run's stop signal; none: never
};

class ImpairedPointToPoint final : public PointToPoint {
 public:
  ImpairedPointToPoint(PointToPoint& inner, const Impairment& impairment, HoldBounds bounds = {});
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override { return inner_.recv(tensor, peer, tag); }

  double heldSeconds() const { return heldSeconds_; }
  int64_t lostSegments() const { return lostSegments_; }

 private:
  PointToPoint& inner_;
  Impairment impairment_;
  HoldBounds bounds_;
  std::mt19937_64 generator_;
  double heldSeconds_ = 0;
  int64_t lostSegments_ = 0;
};

}  // namespace dtbench::comm
