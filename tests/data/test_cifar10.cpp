#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "catch_torch.h"
#include "data/dataset.h"

#include "data/cifar10.h"
#include "temp_dir.h"

using dtbench::data::DataError;
using dtbench::data::loadCifar10;
using dtbench::data::readCifar10Files;
using dtbench::testing::TempDir;

namespace fs = std::filesystem;

namespace {

// The pixel byte i (0..3071) of record r of file f: distinct per plane, row and column.
uint8_t pixel(int f, int r, int i) { return static_cast<uint8_t>((i * 31 + r * 5 + f * 13) % 251); }

// Writes records in the official format: label byte, then 1024 R, 1024 G, 1024 B bytes.
std::string writeRecords(const fs::path& file, int f, const std::vector<int>& labels) {
  std::ofstream out(file, std::ios::binary);
  for (size_t r = 0; r < labels.size(); ++r) {
    out.put(static_cast<char>(labels[r]));
    for (int i = 0; i < 3072; ++i) {
      out.put(static_cast<char>(pixel(f, static_cast<int>(r), i)));
    }
  }
  return file.string();
}

void writeBytes(const fs::path& file, size_t count, char value) {
  std::ofstream out(file, std::ios::binary);
  out << std::string(count, value);
}

}  // namespace

TEST_CASE("readCifar10Files reads labels and RGB planes exactly", "[cifar10]") {
  TempDir dir;
  const auto a = writeRecords(dir.path() / "a.bin", 0, {0, 9, 3});
  const auto b = writeRecords(dir.path() / "b.bin", 1, {7, 1});
  const auto d = readCifar10Files({a, b}, "cifar10/test");
  CHECK(d.name == "cifar10/test");
  CHECK(d.numClasses == 10);
  REQUIRE(d.size() == 5);
  CHECK(d.images.scalar_type() == at::kByte);
  CHECK(d.images.sizes() == at::IntArrayRef({5, 3, 32, 32}));
  CHECK(d.images.is_contiguous());
  CHECK(d.labels.scalar_type() == at::kLong);
  CHECK(d.mean == std::vector<double>{0.4914, 0.4822, 0.4465});
  CHECK(d.std == std::vector<double>{0.2023, 0.1994, 0.2010});
  const std::vector<int64_t> labels(d.labels.data_ptr<int64_t>(), d.labels.data_ptr<int64_t>() + 5);
  CHECK(labels == std::vector<int64_t>{0, 9, 3, 7, 1});
  const auto images = d.images.accessor<uint8_t, 4>();
  const int files[5] = {0, 0, 0, 1, 1};
  const int records[5] = {0, 1, 2, 0, 1};
  int mismatches = 0;
  for (int n = 0; n < 5; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 32; ++y) {
        for (int x = 0; x < 32; ++x) {
          // channel c is the c-th block of 1024 bytes (R, G, B), row-major 32x32
          mismatches += images[n][c][y][x] != pixel(files[n], records[n], c * 1024 + y * 32 + x);
        }
      }
    }
  }
  CHECK(mismatches == 0);
  // Spot checks written out: green plane starts at pixel byte 1024, blue at 2048.
  CHECK(images[1][1][0][0] == pixel(0, 1, 1024));
  CHECK(images[4][2][31][31] == pixel(1, 1, 3071));
}

TEST_CASE("readCifar10Files rejects truncated and foreign files", "[cifar10]") {
  TempDir dir;
  SECTION("truncated inside a record") {
    const auto file = writeRecords(dir.path() / "data_batch_1.bin", 0, {1, 2, 3});
    fs::resize_file(file, 3 * 3073 - 100);
    CHECK_THROWS_AS(readCifar10Files({file}, "x"), DataError);
    CHECK_THROWS_WITH(readCifar10Files({file}, "x"),
                      Catch::Contains(file) && Catch::Contains("9119 bytes") &&
                          Catch::Contains("record size 3073"));
  }
  SECTION("a foreign file") {
    const auto file = (dir.path() / "readme.txt").string();
    writeBytes(file, 1000, 'a');
    CHECK_THROWS_WITH(readCifar10Files({file}, "x"),
                      Catch::Contains(file) && Catch::Contains("1000 bytes") &&
                          Catch::Contains("not a CIFAR-10 binary file"));
  }
  SECTION("an empty file") {
    const auto file = (dir.path() / "empty.bin").string();
    writeBytes(file, 0, 'a');
    CHECK_THROWS_AS(readCifar10Files({file}, "x"), DataError);
  }
}

TEST_CASE("readCifar10Files rejects a label out of range naming file and record and offset",
          "[cifar10]") {
  TempDir dir;
  const auto good = writeRecords(dir.path() / "good.bin", 0, {1});
  const auto bad = writeRecords(dir.path() / "bad.bin", 0, {1, 2, 10, 4});
  CHECK_THROWS_AS(readCifar10Files({good, bad}, "x"), DataError);
  CHECK_THROWS_WITH(readCifar10Files({good, bad}, "x"),
                    Catch::Contains(bad) && Catch::Contains("record 2") &&
                        Catch::Contains("byte offset 6146") && Catch::Contains("label 10"));
}

TEST_CASE("readCifar10Files names a missing file", "[cifar10]") {
  TempDir dir;
  const auto missing = (dir.path() / "nope.bin").string();
  CHECK_THROWS_AS(readCifar10Files({missing}, "x"), DataError);
  CHECK_THROWS_WITH(readCifar10Files({missing}, "x"), Catch::Contains(missing));
  CHECK_THROWS_WITH(readCifar10Files({dir.path().string()}, "x"),
                    Catch::Contains(dir.path().string()));
}

TEST_CASE("loadCifar10 finds cifar-10-batches-bin inside the data dir or as the data dir",
          "[cifar10]") {
  TempDir dir;
  const auto folder = dir.path() / "cifar-10-batches-bin";
  fs::create_directories(folder);
  for (int i = 1; i <= 5; ++i) {
    writeRecords(folder / ("data_batch_" + std::to_string(i) + ".bin"), i, {i, i + 1});
  }
  writeRecords(folder / "test_batch.bin", 9, {8});
  for (const auto& given : {dir.path(), folder}) {
    INFO("data dir " << given);
    const auto splits = loadCifar10(given.string());
    CHECK(splits.train.name == "cifar10/train");
    CHECK(splits.test.name == "cifar10/test");
    REQUIRE(splits.train.size() == 10);
    REQUIRE(splits.test.size() == 1);
    const auto* labels = splits.train.labels.data_ptr<int64_t>();
    CHECK(std::vector<int64_t>(labels, labels + 10) ==
          std::vector<int64_t>{1, 2, 2, 3, 3, 4, 4, 5, 5, 6});
    CHECK(splits.test.labels[0].item<int64_t>() == 8);
    CHECK(splits.train.images[9][2][0][1].item<uint8_t>() == pixel(5, 1, 2049));
    CHECK(splits.test.images[0][0][0][0].item<uint8_t>() == pixel(9, 0, 0));
  }
}

TEST_CASE("loadCifar10 says where it looked and how to get the data", "[cifar10]") {
  TempDir dir;
  const auto nowhere = (dir.path() / "no-such-dir").string();
  CHECK_THROWS_AS(loadCifar10(nowhere), DataError);
  CHECK_THROWS_WITH(loadCifar10(nowhere),
                    Catch::Contains(nowhere + "/cifar-10-batches-bin/data_batch_1.bin") &&
                        Catch::Contains(nowhere + "/data_batch_1.bin") &&
                        Catch::Contains("www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz") &&
                        Catch::Contains("--download") && Catch::Contains("--dataset synthetic"));

  const auto folder = dir.path() / "cifar-10-batches-bin";
  fs::create_directories(folder);
  for (int i = 1; i <= 5; ++i) {
    writeRecords(folder / ("data_batch_" + std::to_string(i) + ".bin"), i, {0});
  }
  CHECK_THROWS_WITH(loadCifar10(dir.path().string()),
                    Catch::Contains((folder / "test_batch.bin").string()) &&
                        Catch::Contains("--dataset synthetic"));
}
