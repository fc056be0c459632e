#pragma once
// Fashion-MNIST from its IDX files (docs/reference.md, "Fashion-MNIST"; data/idx.h for the format).
//
// Files, gzipped or plain (`NAME.gz` is preferred when both exist):
//   train-images-idx3-ubyte, train-labels-idx1-ubyte  (60,000 images)
//   t10k-images-idx3-ubyte,  t10k-labels-idx1-ubyte   (10,000 images)
// Default location: where Debian's `dataset-fashion-mnist` installs them.
//
// The 28x28 grey images are zero-padded to 32x32, centred (2 pixels on every side), as classic
// LeNet-5 did for MNIST, so every model of the zoo keeps its exact architecture with one input
// channel: the Dataset holds uint8 [N, 1, 32, 32]. Normalization uses the dataset's own mean and
// std, computed on the training set's original 28x28 pixels (the padding excluded; the usual
// Fashion-MNIST convention), and the test split uses the training set's values. A padded pixel
// then normalizes to -mean/std, as the training loader's crop padding does.

#include <cstdint>
#include <string>

#include "data/dataset.h"
#include "run/data_defaults.h"

namespace dtbench::data {

using run::kFashionMnistDefaultDir;  // --data-dir's default for fashion-mnist (run/data_defaults.h)
inline constexpr int64_t kFashionMnistSide = 32;  // images are padded to this size

// One split from an image file and a label file: images uint8 [N, 1, 32, 32], numClasses 10,
// mean/std of this split's unpadded pixels. Images larger than 32x32, and image and label counts
// that differ, are DataErrors naming both files.
Dataset readFashionMnistFiles(const std::string& imagesFile, const std::string& labelsFile,
                              const std::string& name);

// train and test from `dataDir`; the test split takes the training split's mean/std. A missing
// file is a DataError that says where it looked and how to get the data.
DatasetSplits loadFashionMnist(const std::string& dataDir);

}  // namespace dtbench::data
