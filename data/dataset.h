#pragma once
// Dataset: a whole split held in memory as uint8 images, the form every dtbench dataset takes.
// CIFAR-10's training set is 150 MB as bytes, so nothing is ever read image by image.

#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace dtbench::data {

struct Dataset {
  std::string name;      // "cifar10/train", "synthetic/test", ...
  at::Tensor images;     // uint8 [N, C, H, W], contiguous; CPU (on the GPU with --data-on-device)
  at::Tensor labels;     // int64 [N], values in [0, numClasses)
  int64_t numClasses = 10;
  std::vector<double> mean;  // per channel, of pixel/255, used for normalization
  std::vector<double> std;   // per channel, of pixel/255

  int64_t size() const { return images.defined() ? images.size(0) : 0; }
  int64_t channels() const { return images.size(1); }
};

struct DatasetSplits {
  Dataset train;
  Dataset test;
};

// A dataset file that is missing, truncated, foreign or corrupt. The message names the file
// (and the offset where it applies) and says what to do.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dtbench::data
