#pragma once
// Gradient buckets as data: which parameters share one all-reduce, from their byte sizes alone
// (docs/design.md, "Gradient synchronization"). No LibTorch: trainer::assignBuckets
// (trainer/sync/bucket_assignment.h) maps a model's parameters onto it, and a step model can lay out
// the buckets of a run it only has the description of.
//
// Contract: assignBucketsBySize(tensors, firstBucketBytes, bucketBytes) is a pure function of the
// tensors' byte sizes and keys and of the two caps. `tensors` are the parameters in model order
// (model.parameters()); the result lists buckets in launch order, each a list of indices into
// `tensors`, every index exactly once. The rules are those of PyTorch DDP (LibTorch 1.13, c10d's
// compute_bucket_assignment_by_size) for the buckets it rebuilds after the first iteration, when
// gradients become ready in reverse parameter order:
//   - tensors are visited in reverse parameter order (the order backward produces gradients);
//   - each key (the trainer's: dtype x device) has one open bucket; a tensor is always added to its
//     key's open bucket;
//   - as soon as that bucket's byte size reaches its cap (size >= cap) it is closed. The cap of a
//     key's first closed bucket is firstBucketBytes, of every later one bucketBytes (the
//     progression is per key: a float and a double bucket each get a small first bucket);
//   - closed buckets come in the order they closed; after them the buckets still open at the end,
//     in reverse order of the first visit to their key (the order c10d's hash map yields in
//     LibTorch 1.13, which c10d does not otherwise specify; with one key, simply last). Only the
//     order of first visits matters, never the keys' values.
// Indices inside a bucket are in visit order, so descending.
// Where a bucket is said to close "when adding the next parameter would exceed its cap",
// c10d (and so dtbench) adds that parameter first and closes the bucket once it reaches the cap, so
// a bucket exceeds its cap by up to its last parameter (a parameter larger than the cap closes
// the bucket it joins).
//
// Worked example (one key, firstBucketBytes = 1 MiB, bucketBytes = 4 MiB), parameters in model
// order p0 = 0.5 MiB, p1 = 3 MiB, p2 = 0.5 MiB, p3 = 2 MiB, p4 = 0.25 MiB, p5 = 1 MiB:
//   visit p5: open {p5} = 1 MiB reaches the first cap of 1 MiB    -> bucket 0 = [5]
//   visit p4, p3, p2: open {p4, p3, p2} = 2.75 MiB < 4 MiB
//   visit p1: open {p4, p3, p2, p1} = 5.75 MiB reaches 4 MiB      -> bucket 1 = [4, 3, 2, 1]
//   visit p0: open {p0} = 0.5 MiB, still open at the end          -> bucket 2 = [0]
// Bucket 0 holds the last layer, whose gradient is ready first, so its all-reduce starts earliest.
//
// Note: 1.13's Python DDP itself (by default) runs the first iteration with a single bucket and
// then rebuilds the buckets in the order gradients actually became ready; where autograd's ready
// order differs from reverse parameter order (it does in torchvision's VGG, for one) DDP's buckets
// differ slightly from these. assignBucketsBySize always assumes reverse parameter order.

//
// assignBucketsByFusion(tensors, thresholdBytes) is the other rule a step model can lay buckets out
// by: Horovod's Tensor Fusion, for predicting a run of Horovod (docs/predict.md, "Bucket layouts").
// Its coordinator fuses the all-reduces that every rank has requested, in the order of the
// requests, into one buffer of at most the threshold (HOROVOD_FUSION_THRESHOLD, 64 MiB by default),
// and never skips a request to fill a buffer (horovod/tensorflow/mpi_ops.cc of 2017 and 2018, the
// loop that builds the fused responses):
//   - tensors are visited in reverse parameter order (the requests of one backward, all known at
//     one of the coordinator's cycles);
//   - the open bucket takes the next tensor when it has the same key and their bytes together stay
//     within the threshold (sum <= threshold); otherwise the open bucket is launched and the tensor
//     opens the next one;
//   - so a tensor larger than the threshold is a bucket of its own, and no bucket exceeds the
//     threshold unless it holds a single tensor.
// Buckets come in visit order; indices inside a bucket are in visit order (descending).
//
// Worked example (threshold 4 MiB, the parameters of the example above): visit p5 = 1 MiB, p4 =
// 0.25 MiB, p3 = 2 MiB: 3.25 MiB; p2 = 0.5 MiB would make 3.75 MiB, within 4 -> {p5, p4, p3, p2};
// p1 = 3 MiB would make 6.75 MiB -> bucket 0 = [5, 4, 3, 2]; {p1} + p0 = 3.5 MiB -> bucket 1 = [1, 0].
// The same tensors by c10d's rule with a first cap of 1 MiB make three buckets, [5], [4, 3, 2, 1], [0].

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/named_values.h"

namespace dtbench::comm {

// Which rule lays the buckets out: c10d's (assignBucketsBySize; dtbench's trainer always uses it) or
// Horovod's Tensor Fusion (assignBucketsByFusion; a prediction's what-if).
enum class BucketLayout { kDdp, kFusion };
const common::NamedValues<BucketLayout>& bucketLayoutNames();  // ddp fusion

// One tensor to bucket: its byte size and a key; tensors with equal keys share buckets (trainer:
// dtype x device).
struct BucketTensor {
  int64_t bytes = 0;
  int key = 0;
};

// The buckets of `tensors` (parameters in model order) in launch order; see the contract above.
// An empty list gives no buckets. Throws std::invalid_argument for a negative cap or a negative
// byte size.
std::vector<std::vector<size_t>> assignBucketsBySize(const std::vector<BucketTensor>& tensors, int64_t firstBucketBytes,
                                                     int64_t bucketBytes);

// The buckets of `tensors` (parameters in model order) by Horovod's Tensor Fusion; see the contract
// above. Throws std::invalid_argument for a negative threshold or a negative byte size.
std::vector<std::vector<size_t>> assignBucketsByFusion(const std::vector<BucketTensor>& tensors, int64_t thresholdBytes);

}  // namespace dtbench::comm
