#pragma once
// Where a run's data comes from by default: the datasets' default folders (--data-dir) and the
// CIFAR-10 archive --download fetches (--download-url, --download-md5). Settings' defaults, so
// they are typed here, below the data library that uses them (data/download.h, data/fashion_mnist.h).

#include "run/settings.h"

namespace dtbench::run {

inline constexpr const char* kCifar10DefaultDir = "data";  // the folder holding cifar-10-batches-bin/
// Where Debian's dataset-fashion-mnist installs its IDX files.
inline constexpr const char* kFashionMnistDefaultDir = "/usr/share/datasets/fashion-mnist";
inline constexpr const char* kCifar10Url = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz";
inline constexpr const char* kCifar10Md5 = "c32a1d4ab5d03f1284b67883e8d87530";

// The default --data-dir of `dataset`; "" for synthetic data, which has no files.
inline const char* defaultDataDir(DatasetKind dataset) {
  switch (dataset) {
    case DatasetKind::kCifar10: return kCifar10DefaultDir;
    case DatasetKind::kFashionMnist: return kFashionMnistDefaultDir;
    case DatasetKind::kSynthetic: return "";
  }
  return "";
}

}  // namespace dtbench::run
