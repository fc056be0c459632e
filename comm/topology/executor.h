#pragma once
// runSchedule: the one executor of every point-to-point topology. Runs a Schedule (schedule.h) as
// an in-place sum all-reduce of `tensor` over any PointToPoint.
//
// Contract: every rank of `p2p` calls it with the same Schedule and a tensor of the same element
// count and type (CPU, contiguous, float32, float16 or bfloat16); on return every rank's tensor
// holds the element-wise sum. Per step, a rank posts all its receives (into scratch buffers) and
// sends, waits for all of them, then applies the received chunks in the Schedule's order. Tag of
// step k: k mod (PointToPoint::kMaxTag + 1); successive calls rely on per-tag message order.
// Failures propagate as CommError from the PointToPoint's Work (naming the peer).
//
// Note [Reduced-precision sums]
// float16 and bfloat16 chunks travel in their own type (the bytes the user asked to measure) but
// are added in float32: when a rank receives several contributions for one chunk in one step (a
// star's hub, a clique's owner, a tree's parent), they are summed in float32 together with the
// rank's own chunk and rounded once. A ring rounds after each of its N-1 additions, as NCCL does.
// Small integers (|x| <= 256 for bfloat16, 2048 for float16) are summed exactly either way, which is
// what the tests check.

#include <ATen/ATen.h>

#include "comm/point_to_point.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor);

}  // namespace dtbench::comm
