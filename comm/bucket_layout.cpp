#include "comm/bucket_layout.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace dtbench::comm {
namespace {

void checkSizes(const char* function, const std::vector<BucketTensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].bytes < 0) {
      throw std::invalid_argument(std::string(function) + ": tensor " + std::to_string(i) + " has " +
                                  std::to_string(tensors[i].bytes) + " bytes; a size must be >= 0");
    }
  }
}

// The open bucket of one key and where that key is in its cap progression.
struct OpenBucket {
  int key = 0;
  std::vector<size_t> indices;
  int64_t bytes = 0;
  bool closedOne = false;  // a bucket of this key has closed: the cap is bucketBytes from now on
};

OpenBucket& openBucketFor(std::vector<OpenBucket>& open, int key) {
  for (OpenBucket& b : open) {
    if (b.key == key) return b;
  }
  open.push_back(OpenBucket{key, {}, 0, false});
  return open.back();
}

}  // namespace

std::vector<std::vector<size_t>> assignBucketsBySize(const std::vector<BucketTensor>& tensors, int64_t firstBucketBytes,
                                                     int64_t bucketBytes) {
  if (firstBucketBytes < 0 || bucketBytes < 0) {
    throw std::invalid_argument("assignBucketsBySize: bucket caps must be >= 0 bytes, got first " +
                                std::to_string(firstBucketBytes) + " and " + std::to_string(bucketBytes));
  }
  checkSizes("assignBucketsBySize", tensors);
  std::vector<std::vector<size_t>> buckets;
  std::vector<OpenBucket> open;  // in the order their key was first visited
  for (size_t i = tensors.size(); i-- > 0;) {
    OpenBucket& b = openBucketFor(open, tensors[i].key);
    b.indices.push_back(i);
    b.bytes += tensors[i].bytes;
    const int64_t cap = b.closedOne ? bucketBytes : firstBucketBytes;
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

std::vector<std::vector<size_t>> assignBucketsByFusion(const std::vector<BucketTensor>& tensors, int64_t thresholdBytes) {
  if (thresholdBytes < 0) {
    throw std::invalid_argument("assignBucketsByFusion: the fusion threshold must be >= 0 bytes, got " +
                                std::to_string(thresholdBytes));
  }
  checkSizes("assignBucketsByFusion", tensors);
  std::vector<std::vector<size_t>> buckets;
  std::vector<size_t> open;
  int64_t openBytes = 0;
  for (size_t i = tensors.size(); i-- > 0;) {
    if (!open.empty() &&
        (tensors[i].key != tensors[open.front()].key || openBytes + tensors[i].bytes > thresholdBytes)) {
      buckets.push_back(std::move(open));
      open.clear();
      openBytes = 0;
    }
    open.push_back(i);
    openBytes += tensors[i].bytes;
  }
  if (!open.empty()) buckets.push_back(std::move(open));
  return buckets;
}

const common::NamedValues<BucketLayout>& bucketLayoutNames() {
  static const common::NamedValues<BucketLayout> names(
      {"bucket layout", "bucket layouts"}, "--bucket-layout",
      {{BucketLayout::kDdp, "ddp"}, {BucketLayout::kFusion, "fusion"}});
  return names;
}

}  // namespace dtbench::comm
