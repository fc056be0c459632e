#include "trainer/sync/bucket_assignment.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace dtbench::trainer {
namespace {

int64_t tensorBytes(const at::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

// The open bucket of one (dtype, device) and where that key is in its cap progression.
struct OpenBucket {
  at::ScalarType dtype;
  at::Device device;
  std::vector<size_t> indices;
  int64_t bytes = 0;
  bool closedOne = false;  // a bucket of this key has closed: the cap is bucketBytes from now on
};

OpenBucket& openBucketFor(std::vector<OpenBucket>& open, const at::Tensor& t) {
  for (OpenBucket& b : open) {
    if (b.dtype == t.scalar_type() && b.device == t.device()) return b;
  }
  open.push_back(OpenBucket{t.scalar_type(), t.device(), {}, 0, false});
  return open.back();
}

}  // namespace

std::vector<std::vector<size_t>> assignBuckets(const std::vector<at::Tensor>& tensors,
                                               const BucketLimits& limits) {
  if (limits.firstBucketBytes < 0 || limits.bucketBytes < 0) {
    throw std::invalid_argument("assignBuckets: bucket caps must be >= 0 bytes, got first " +
                                std::to_string(limits.firstBucketBytes) + " and " +
                                std::to_string(limits.bucketBytes));
  }
  std::vector<std::vector<size_t>> buckets;
  std::vector<OpenBucket> open;  // in the order their key was first visited
  for (size_t i = tensors.size(); i-- > 0;) {
    const at::Tensor& t = tensors[i];
    if (!t.defined() || t.is_sparse()) {
      throw std::invalid_argument("assignBuckets: tensor " + std::to_string(i) +
                                  " is undefined or sparse; only dense parameters can be bucketed");
    }
    OpenBucket& b = openBucketFor(open, t);
    b.indices.push_back(i);
    b.bytes += tensorBytes(t);
    const int64_t cap = b.closedOne ? limits.bucketBytes : limits.firstBucketBytes;
    if (b.bytes >= cap) {
      buckets.push_back(std::move(b.indices));
      b.indices.clear();
      b.bytes = 0;
      b.closedOne = true;
    }
  }
  for (auto it = open.rbegin(); it != open.rend(); ++it) {
    if (!it->indices.empty()) buckets.push_back(std::move(it->indices));
  }
  return buckets;
}

int64_t bucketBytes(const std::vector<at::Tensor>& tensors, const std::vector<size_t>& bucket) {
  int64_t bytes = 0;
  for (size_t i : bucket) bytes += tensorBytes(tensors.at(i));
  return bytes;
}

}  // namespace dtbench::trainer
