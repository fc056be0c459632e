#pragma once
// Gradient buckets for the bucketed, overlapped all-reduce of `--sync ssgd` (docs/design.md,
// "Gradient synchronization").
//
// Contract: assignBuckets(tensors, limits) is a pure function of the tensors' dtypes, devices and
// byte sizes (numel * element size) and of the limits: the layout of comm::assignBucketsBySize
// (comm/bucket_layout.h, which states the rules, DDP's and so c10d's, with a worked example), each
// tensor's key being its (dtype, device). `tensors` are the parameters in model order
// (model.parameters()); the result lists buckets in launch order, each a list of indices into
// `tensors`, every index exactly once.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "run/run_config.h"

namespace dtbench::trainer {

struct BucketLimits {
  int64_t firstBucketBytes = run::kFirstBucketBytes;                // DDP's _DEFAULT_FIRST_BUCKET_BYTES
  int64_t bucketBytes = run::mibToBytes(run::kDefaultBucketMb);  // --bucket-mb
};

// The buckets of `tensors` (parameters in model order) in launch order; see the contract above.
// An empty list gives no buckets. Throws std::invalid_argument for a negative cap or for a tensor
// that is undefined or sparse.
std::vector<std::vector<size_t>> assignBuckets(const std::vector<at::Tensor>& tensors,
                                               const BucketLimits& limits);

// The bytes (numel * element size) of the tensors a bucket names. Throws std::out_of_range for an
// index outside `tensors`.
int64_t bucketBytes(const std::vector<at::Tensor>& tensors, const std::vector<size_t>& bucket);

}  // namespace dtbench::trainer
