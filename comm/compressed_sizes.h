#pragma once
// What a gradient bucket all-reduces under --compress, as data from its gradients' shapes alone
// (docs/design.md, "Gradient compression"). No LibTorch: powersgd's row (run/compression.h) says from
// these sizes what a bucket sends, which the trainer's PowerSGD (trainer/sync/powersgd.h) all-reduces
// and the step model of `dtbench predict` lays out for a run it only has the shapes of.
//
// PowerSGD views a gradient of two or more dimensions as a matrix of n rows (its first dimension) and
// m columns (the rest) and, with r = min(n, m, R), sends its rank-r factors P (n × r) and Q (m × r)
// instead where (n + m)·r·2 < n·m (PyTorch's _should_compress with min_compression_rate 2). The other
// gradients (1-D ones, small matrices) travel whole in float32, packed with the stop flag.
// Worked example, LeNet at R = 2 (one bucket): its five weight matrices (6 × 75, 16 × 150, 120 × 400,
// 84 × 120, 10 × 84) send P of 472 and Q of 1,658 elements; its five biases and the flag 237: 2,367
// float32 elements against 62,007 uncompressed, a ratio of 26.2.

#include <cstdint>
#include <vector>

namespace dtbench::comm {

struct PowerSgdMatrix {
  bool compressed = false;
  int64_t rows = 0;  // n
  int64_t cols = 0;  // m
  int64_t rank = 0;  // r = min(n, m, R)
};

// Whether a gradient of `shape` is sent as rank-`rank` factors, and with which n, m and r.
PowerSgdMatrix powerSgdMatrix(const std::vector<int64_t>& shape, int64_t rank);

// The elements of one PowerSGD step's three all-reduces for a bucket of these gradient shapes.
struct PowerSgdBucketSizes {
  int64_t uncompressed = 0;  // the gradients sent whole, plus the stop flag where the bucket carries it
  int64_t p = 0;
  int64_t q = 0;
};
PowerSgdBucketSizes powerSgdBucketSizes(const std::vector<std::vector<int64_t>>& shapes, int64_t rank,
                                        bool carriesFlag);

}  // namespace dtbench::comm
