#include "trainer/sync/bucket_assignment.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "comm/bucket_layout.h"

namespace dtbench::trainer {
namespace {

int64_t tensorBytes(const at::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

}  // namespace

std::vector<std::vector<size_t>> assignBuckets(const std::vector<at::Tensor>& tensors,
                                               const BucketLimits& limits) {
  // Keys number the distinct (dtype, device) pairs in the order of their first visit (reverse
  // parameter order), the order in which the layout opens their buckets.
  std::vector<std::pair<at::ScalarType, at::Device>> keys;
  std::vector<comm::BucketTensor> sizes(tensors.size());
  for (size_t i = tensors.size(); i-- > 0;) {
    const at::Tensor& t = tensors[i];
    if (!t.defined() || t.is_sparse()) {
      throw std::invalid_argument("assignBuckets: tensor " + std::to_string(i) +
                                  " is undefined or sparse; only dense parameters can be bucketed");
    }
    const std::pair<at::ScalarType, at::Device> key{t.scalar_type(), t.device()};
    size_t k = 0;
    while (k < keys.size() && keys[k] != key) ++k;
    if (k == keys.size()) keys.push_back(key);
    sizes[i] = comm::BucketTensor{tensorBytes(t), static_cast<int>(k)};
  }
  return comm::assignBucketsBySize(sizes, limits.firstBucketBytes, limits.bucketBytes);
}

int64_t bucketBytes(const std::vector<at::Tensor>& tensors, const std::vector<size_t>& bucket) {
  int64_t bytes = 0;
  for (size_t i : bucket) bytes += tensorBytes(tensors.at(i));
  return bytes;
}

}  // namespace dtbench::trainer
