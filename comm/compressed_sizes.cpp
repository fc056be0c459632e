#include "comm/compressed_sizes.h"

#include <algorithm>

namespace dtbench::comm {

PowerSgdMatrix powerSgdMatrix(const std::vector<int64_t>& shape, int64_t rank) {
  PowerSgdMatrix m;
  if (shape.size() < 2) return m;
  m.rows = shape.front();
  m.cols = 1;
  for (size_t i = 1; i < shape.size(); ++i) m.cols *= shape[i];
  m.rank = std::min({m.rows, m.cols, rank});
  m.compressed = (m.rows + m.cols) * m.rank * 2 < m.rows * m.cols;
  return m;
}

PowerSgdBucketSizes powerSgdBucketSizes(const std::vector<std::vector<int64_t>>& shapes, int64_t rank,
                                        bool carriesFlag) {
  PowerSgdBucketSizes sizes;
  for (const std::vector<int64_t>& shape : shapes) {
    const PowerSgdMatrix m = powerSgdMatrix(shape, rank);
    if (m.compressed) {
      sizes.p += m.rows * m.rank;
      sizes.q += m.cols * m.rank;
    } else {
      int64_t elements = 1;
      for (int64_t d : shape) elements *= d;
      sizes.uncompressed += elements;
    }
  }
  if (carriesFlag) sizes.uncompressed += 1;
  return sizes;
}

}  // namespace dtbench::comm
