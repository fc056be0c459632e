#include "data/fashion_mnist.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <system_error>
#include <utility>
#include <vector>

#include "data/idx.h"

namespace dtbench::data {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kClasses = 10;

// Mean and std (population) of pixel/255 over every byte of `images`, exact, from a histogram.
std::pair<double, double> pixelMoments(const at::Tensor& images) {
  std::array<int64_t, 256> histogram{};
  const auto* p = images.data_ptr<uint8_t>();
  const int64_t n = images.numel();
  for (int64_t i = 0; i < n; ++i) ++histogram[p[i]];
  double sum = 0;
  double sumSquares = 0;
  for (int v = 0; v < 256; ++v) {
    const double x = v / 255.0;
    sum += x * static_cast<double>(histogram[static_cast<size_t>(v)]);
    sumSquares += x * x * static_cast<double>(histogram[static_cast<size_t>(v)]);
  }
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  const double variance = n > 0 ? sumSquares / static_cast<double>(n) - mean * mean : 0.0;
  return {mean, std::sqrt(std::max(variance, 0.0))};
}

std::string howToGetFashionMnist(const std::string& dir) {
  return "install Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist, files in " +
         std::string(kFashionMnistDefaultDir) +
         "), or point --data-dir at a folder holding the four IDX files of "
         "https://github.com/zalandoresearch/fashion-mnist (looked in " +
         dir + ")";
}

// dir/name.gz, else dir/name; a DataError when neither exists.
std::string findFile(const fs::path& dir, const std::string& name) {
  std::error_code error;
  for (const auto& candidate : {dir / (name + ".gz"), dir / name}) {
    if (fs::is_regular_file(candidate, error)) return candidate.string();
  }
  throw DataError("Fashion-MNIST file " + (dir / name).string() + "[.gz] is missing; " +
                  howToGetFashionMnist(dir.string()));
}

}  // namespace

Dataset readFashionMnistFiles(const std::string& imagesFile, const std::string& labelsFile,
                              const std::string& name) {
  const at::Tensor raw = readIdxImages(imagesFile);
  const at::Tensor labels = readIdxLabels(labelsFile, kClasses);
  if (raw.size(0) != labels.size(0)) {
    throw DataError("Fashion-MNIST image file " + imagesFile + " holds " +
                    std::to_string(raw.size(0)) + " images but label file " + labelsFile +
                    " holds " + std::to_string(labels.size(0)) +
                    " labels: the two files do not belong together; get both again");
  }
  const int64_t rows = raw.size(1);
  const int64_t cols = raw.size(2);
  if (rows > kFashionMnistSide || cols > kFashionMnistSide) {
    throw DataError("Fashion-MNIST image file " + imagesFile + " holds " + std::to_string(rows) +
                    "x" + std::to_string(cols) + " images, larger than the " +
                    std::to_string(kFashionMnistSide) + "x" + std::to_string(kFashionMnistSide) +
                    " dtbench pads them to: is it really Fashion-MNIST?");
  }
  const int64_t top = (kFashionMnistSide - rows) / 2;
  const int64_t left = (kFashionMnistSide - cols) / 2;
  const auto [pixelMean, pixelStd] = pixelMoments(raw);

  Dataset dataset;
  dataset.name = name;
  dataset.images = at::constant_pad_nd(raw.unsqueeze(1),
                                       {left, kFashionMnistSide - cols - left, top,
                                        kFashionMnistSide - rows - top},
                                       0)
                       .contiguous();
  dataset.labels = labels;
  dataset.numClasses = kClasses;
  dataset.mean = {pixelMean};
  dataset.std = {pixelStd > 0 ? pixelStd : 1.0};
  return dataset;
}

DatasetSplits loadFashionMnist(const std::string& dataDir) {
  const fs::path dir(dataDir);
  const std::string trainImages = findFile(dir, "train-images-idx3-ubyte");
  const std::string trainLabels = findFile(dir, "train-labels-idx1-ubyte");
  const std::string testImages = findFile(dir, "t10k-images-idx3-ubyte");
  const std::string testLabels = findFile(dir, "t10k-labels-idx1-ubyte");
  DatasetSplits splits;
  splits.train = readFashionMnistFiles(trainImages, trainLabels, "fashion-mnist/train");
  splits.test = readFashionMnistFiles(testImages, testLabels, "fashion-mnist/test");
  splits.test.mean = splits.train.mean;
  splits.test.std = splits.train.std;
  return splits;
}

}  // namespace dtbench::data
