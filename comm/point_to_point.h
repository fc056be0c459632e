#pragma once
// PointToPoint: the transport every topology algorithm runs on, and all it may use.
//
// Contract:
//  - rank() in [0, size()); size() >= 1; both fixed for the object's life.
//  - send(tensor, peer, tag) starts sending the bytes of `tensor` to `peer`; recv(tensor, peer, tag)
//    starts receiving exactly tensor.nbytes() bytes from `peer` into `tensor`. Tensors must be CPU,
//    contiguous, of a supported element type (comm/element_type.h), and stay alive and untouched
//    until the returned Work's wait() returned. peer != rank().
//  - Messages between one (sender, receiver, tag) are matched in the order they were posted; a
//    receive of a different byte count than was sent is an error naming the peer.
//  - tag in [0, kMaxTag]. Distinct tags never match each other.
//  - Thread-compatible: one thread issues operations on one object.

#include <ATen/ATen.h>

#include "comm/work.h"

namespace dtbench::comm {

class PointToPoint {
 public:
  static constexpr int kMaxTag = 32767;  // MPI's guaranteed minimum of MPI_TAG_UB

  virtual ~PointToPoint() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual WorkPtr send(const at::Tensor& tensor, int peer, int tag) = 0;
  virtual WorkPtr recv(const at::Tensor& tensor, int peer, int tag) = 0;
};

// Throws std::invalid_argument unless `tensor` is CPU, contiguous and of a supported element type,
// and `peer` is a rank other than `self` in a world of `size`. `operation` names the caller.
void checkPointToPoint(const at::Tensor& tensor, int peer, int tag, int self, int size, const char* operation);

}  // namespace dtbench::comm
