// The IDX reader and Fashion-MNIST on generated files, plain and gzipped, good and broken.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>


#include "catch_torch.h"

#include "data/dataset.h"
#include "data/fashion_mnist.h"
#include "data/idx.h"
#include "dtbench/build_config.h"
#include "skip.h"
#include "temp_dir.h"

#if DTBENCH_HAVE_ZLIB
#include <zlib.h>
#endif

using dtbench::data::DataError;
using dtbench::testing::TempDir;
namespace fs = std::filesystem;

namespace {

void putBigEndian(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

uint8_t idxPixel(int64_t image, int64_t y, int64_t x) {
  return static_cast<uint8_t>((image * 37 + y * 11 + x * 3) % 256);
}

std::vector<uint8_t> imageFile(int64_t count, int64_t rows, int64_t cols, uint32_t magic = 2051) {
  std::vector<uint8_t> bytes;
  putBigEndian(bytes, magic);
  putBigEndian(bytes, static_cast<uint32_t>(count));
  putBigEndian(bytes, static_cast<uint32_t>(rows));
  putBigEndian(bytes, static_cast<uint32_t>(cols));
  for (int64_t i = 0; i < count; ++i)
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x) bytes.push_back(idxPixel(i, y, x));
  return bytes;
}

std::vector<uint8_t> labelFile(const std::vector<uint8_t>& labels, uint32_t magic = 2049) {
  std::vector<uint8_t> bytes;
  putBigEndian(bytes, magic);
  putBigEndian(bytes, static_cast<uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

std::string writePlain(const std::string& file, const std::vector<uint8_t>& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return file;
}

#if DTBENCH_HAVE_ZLIB
std::string writeGzipped(const std::string& file, const std::vector<uint8_t>& bytes) {
  gzFile out = gzopen(file.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(out) == Z_OK);
  return file;
}
#endif

std::vector<uint8_t> fileBytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("IDX images and labels read from plain files", "[idx]") {
  TempDir tmp;
  const auto images = dtbench::data::readIdxImages(writePlain(tmp / "images", imageFile(3, 28, 28)));
  REQUIRE(images.sizes() == at::IntArrayRef({3, 28, 28}));
  CHECK(images.scalar_type() == at::kByte);
  CHECK(images[2][5][7].item<int64_t>() == idxPixel(2, 5, 7));
  CHECK(images[0][27][27].item<int64_t>() == idxPixel(0, 27, 27));
  const auto labels = dtbench::data::readIdxLabels(writePlain(tmp / "labels", labelFile({9, 0, 4})), 10);
  REQUIRE(labels.sizes() == at::IntArrayRef({3}));
  CHECK(labels.scalar_type() == at::kLong);
  CHECK(labels[0].item<int64_t>() == 9);
  CHECK(labels[2].item<int64_t>() == 4);
}

#if DTBENCH_HAVE_ZLIB
TEST_CASE("IDX gzipped files read the same as plain ones", "[idx]") {
  TempDir tmp;
  const auto bytes = imageFile(4, 28, 28);
  const auto plain = dtbench::data::readIdxImages(writePlain(tmp / "plain", bytes));
  // The name does not matter: gzip is recognized by its magic bytes.
  const auto gzipped = dtbench::data::readIdxImages(writeGzipped(tmp / "gzipped-without-suffix", bytes));
  CHECK(at::equal(plain, gzipped));
  const auto labels = dtbench::data::readIdxLabels(writeGzipped(tmp / "labels.gz", labelFile({1, 2, 3, 4})), 10);
  CHECK(labels[3].item<int64_t>() == 4);
}

TEST_CASE("IDX a truncated gzip stream names the file", "[idx]") {
  TempDir tmp;
  const std::string file = writeGzipped(tmp / "cut.gz", imageFile(20, 28, 28));
  auto bytes = fileBytes(file);
  bytes.resize(bytes.size() / 2);
  writePlain(file, bytes);
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(file),
                    Catch::Contains(file) && Catch::Contains("truncated") && Catch::Contains("uncompressed bytes"));
}
#endif

TEST_CASE("IDX wrong magic names the file and both numbers", "[idx]") {
  TempDir tmp;
  const std::string labels = writePlain(tmp / "labels", labelFile({1, 2}));
  CHECK_THROWS_AS(dtbench::data::readIdxImages(labels), DataError);
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(labels),
                    Catch::Contains(labels) && Catch::Contains("magic number 2049") && Catch::Contains("not 2051"));
  const std::string images = writePlain(tmp / "images", imageFile(1, 28, 28));
  CHECK_THROWS_WITH(dtbench::data::readIdxLabels(images, 10),
                    Catch::Contains(images) && Catch::Contains("magic number 2051") && Catch::Contains("not 2049"));
}

TEST_CASE("IDX truncated and oversized files give the byte offset", "[idx]") {
  TempDir tmp;
  auto bytes = imageFile(3, 28, 28);  // 16 + 3 * 784 = 2368 bytes
  bytes.resize(2000);
  const std::string cut = writePlain(tmp / "cut", bytes);
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(cut),
                    Catch::Contains(cut) && Catch::Contains("2352 data bytes from byte offset 16") &&
                        Catch::Contains("end at byte offset 2000") && Catch::Contains("truncated"));
  bytes.resize(10);
  const std::string header = writePlain(tmp / "header", bytes);
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(header),
                    Catch::Contains(header) && Catch::Contains("byte offset 10") && Catch::Contains("header"));
  auto longer = labelFile({1, 2, 3});
  longer.push_back(7);
  const std::string extra = writePlain(tmp / "extra", longer);
  CHECK_THROWS_WITH(dtbench::data::readIdxLabels(extra, 10), Catch::Contains(extra) && Catch::Contains("extra bytes"));
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(tmp / "absent"), Catch::Contains(tmp / "absent"));
}

TEST_CASE("IDX a header whose dimensions multiply past 64 bits names the file and the dims", "[idx]") {
  // 2^30 * 2^30 * 16 = 2^64 data bytes: the product wraps to 0 in int64, which matched the empty
  // data of this 16-byte file and reached at::empty.
  TempDir tmp;
  std::vector<uint8_t> bytes;
  putBigEndian(bytes, 2051);
  for (uint32_t dim : {1u << 30, 1u << 30, 16u}) putBigEndian(bytes, dim);
  const std::string huge = writePlain(tmp / "huge", bytes);
  CHECK_THROWS_AS(dtbench::data::readIdxImages(huge), DataError);
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(huge),
                    Catch::Contains(huge) && Catch::Contains("1073741824 x 1073741824 x 16") &&
                        Catch::Contains("more data bytes than 64 bits can count") &&
                        Catch::Contains("the 0 data bytes it holds") && Catch::Contains("truncated"));
  // Each dimension within bounds, the product far beyond the data present: still the file's dims.
  bytes.resize(4);
  for (uint32_t dim : {1u << 30, 1u << 30, 1u << 30}) putBigEndian(bytes, dim);
  bytes.resize(bytes.size() + 100, 7);
  writePlain(huge, bytes);
  CHECK_THROWS_WITH(dtbench::data::readIdxImages(huge),
                    Catch::Contains(huge) && Catch::Contains("1073741824 x 1073741824 x 1073741824") &&
                        Catch::Contains("the 100 data bytes it holds") && Catch::Contains("truncated"));
}

TEST_CASE("IDX a label out of range names the file and item and offset", "[idx]") {
  TempDir tmp;
  const std::string file = writePlain(tmp / "labels", labelFile({3, 9, 10, 2}));
  CHECK_THROWS_AS(dtbench::data::readIdxLabels(file, 10), DataError);
  CHECK_THROWS_WITH(dtbench::data::readIdxLabels(file, 10),
                    Catch::Contains(file) && Catch::Contains("item 2") && Catch::Contains("byte offset 10") &&
                        Catch::Contains("label 10"));
}

TEST_CASE("Fashion-MNIST files are padded to 32x32 and normalized with their own statistics", "[fashion-mnist]") {
  TempDir tmp;
  const std::string images = writePlain(tmp / "images", imageFile(5, 28, 28));
  const std::string labels = writePlain(tmp / "labels", labelFile({0, 1, 2, 3, 9}));
  const auto d = dtbench::data::readFashionMnistFiles(images, labels, "fashion-mnist/train");
  REQUIRE(d.images.sizes() == at::IntArrayRef({5, 1, 32, 32}));
  CHECK(d.channels() == 1);
  CHECK(d.numClasses == 10);
  CHECK(d.images.is_contiguous());
  // Centred: 2 zero rows and columns on every side, the original pixels inside.
  CHECK(d.images.slice(2, 0, 2).sum().item<int64_t>() == 0);
  CHECK(d.images.slice(2, 30, 32).sum().item<int64_t>() == 0);
  CHECK(d.images.slice(3, 0, 2).sum().item<int64_t>() == 0);
  CHECK(d.images.slice(3, 30, 32).sum().item<int64_t>() == 0);
  CHECK(d.images[3][0][2 + 5][2 + 7].item<int64_t>() == idxPixel(3, 5, 7));
  // Mean and std of the unpadded pixels.
  const auto raw = dtbench::data::readIdxImages(images).to(at::kDouble).div(255);
  REQUIRE(d.mean.size() == 1);
  CHECK(d.mean[0] == Approx(raw.mean().item<double>()).epsilon(1e-12));
  CHECK(d.std[0] == Approx(raw.std(/*unbiased=*/false).item<double>()).epsilon(1e-9));
  CHECK(d.labels[4].item<int64_t>() == 9);
}

TEST_CASE("Fashion-MNIST image and label count mismatch names both files", "[fashion-mnist]") {
  TempDir tmp;
  const std::string images = writePlain(tmp / "images", imageFile(5, 28, 28));
  const std::string labels = writePlain(tmp / "labels", labelFile({0, 1, 2, 3}));
  CHECK_THROWS_AS(dtbench::data::readFashionMnistFiles(images, labels, "x"), DataError);
  CHECK_THROWS_WITH(dtbench::data::readFashionMnistFiles(images, labels, "x"),
                    Catch::Contains(images) && Catch::Contains(labels) && Catch::Contains("5 images") &&
                        Catch::Contains("4 labels"));
  const std::string big = writePlain(tmp / "big", imageFile(4, 33, 28));
  CHECK_THROWS_WITH(dtbench::data::readFashionMnistFiles(big, labels, "x"), Catch::Contains(big));
}

TEST_CASE("Fashion-MNIST folder with plain files and a missing one", "[fashion-mnist]") {
  TempDir tmp;
  writePlain(tmp / "train-images-idx3-ubyte", imageFile(6, 28, 28));
  writePlain(tmp / "train-labels-idx1-ubyte", labelFile({0, 1, 2, 3, 4, 5}));
  writePlain(tmp / "t10k-images-idx3-ubyte", imageFile(2, 28, 28));
  CHECK_THROWS_WITH(dtbench::data::loadFashionMnist(tmp.path().string()),
                    Catch::Contains("t10k-labels-idx1-ubyte") && Catch::Contains("dataset-fashion-mnist") &&
                        Catch::Contains("--data-dir"));
  writePlain(tmp / "t10k-labels-idx1-ubyte", labelFile({7, 8}));
  const auto splits = dtbench::data::loadFashionMnist(tmp.path().string());
  CHECK(splits.train.size() == 6);
  CHECK(splits.test.size() == 2);
  CHECK(splits.test.mean == splits.train.mean);  // the training set's statistics
  CHECK(splits.test.std == splits.train.std);
  CHECK(splits.test.labels[1].item<int64_t>() == 8);
}

TEST_CASE("Fashion-MNIST from Debian's dataset-fashion-mnist when installed", "[fashion-mnist]") {
  const std::string dir = dtbench::data::kFashionMnistDefaultDir;
  if (!fs::exists(fs::path(dir) / "train-images-idx3-ubyte.gz")) {
    dtbench::testing::skipTest("dataset-fashion-mnist is not installed in " + dir);
    return;
  }
  const auto splits = dtbench::data::loadFashionMnist(dir);
  CHECK(splits.train.size() == 60000);
  CHECK(splits.test.size() == 10000);
  CHECK(splits.train.images.sizes() == at::IntArrayRef({60000, 1, 32, 32}));
  // Every class has 6,000 training and 1,000 test images.
  CHECK(at::equal(splits.train.labels.bincount(), at::full({10}, 6000, at::kLong)));
  CHECK(at::equal(splits.test.labels.bincount(), at::full({10}, 1000, at::kLong)));
  // The training set's mean pixel: about 0.286, std about 0.353 (the values torchvision users quote).
  CHECK(splits.train.mean[0] == Approx(0.2860).margin(5e-4));
  CHECK(splits.train.std[0] == Approx(0.3530).margin(5e-4));
}
