#pragma once
// CountingPointToPoint: a PointToPoint that forwards to another and records every send and recv
// in a TrafficRecorder (traffic_recorder.h): the "counted" bytes of every point-to-point topology. Bytes
// are recorded when the operation is posted (in the timeline's 10 ms bin of that moment).
// Contract: PointToPoint's; both referenced objects outlive it.

#include "comm/point_to_point.h"
#include "comm/traffic/traffic_recorder.h"

namespace dtbench::comm {

class CountingPointToPoint final : public PointToPoint {
 public:
  CountingPointToPoint(PointToPoint& inner, TrafficRecorder& recorder) : inner_(inner), recorder_(recorder) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override {
    WorkPtr work = inner_.send(tensor, peer, tag);
    recorder_.recordSend(peer, static_cast<int64_t>(tensor.nbytes()));
    return work;
  }
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override {
    WorkPtr work = inner_.recv(tensor, peer, tag);
    recorder_.recordRecv(peer, static_cast<int64_t>(tensor.nbytes()));
    return work;
  }

 private:
  PointToPoint& inner_;
  TrafficRecorder& recorder_;
};

}  // namespace dtbench::comm
