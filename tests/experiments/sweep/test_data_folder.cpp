#include <catch2/catch.hpp>

#include "common/usage_error.h"
#include "experiments/sweep/data_folder.h"
#include "run/run_config.h"
#include "temp_dir.h"

#include <filesystem>
#include <fstream>
#include <string>

// The data folder of a sweep's points, checked by the files' names before anything runs.

namespace fs = std::filesystem;
using dtbench::run::DataConfig;
using dtbench::run::DatasetKind;
using dtbench::sweep::checkDataFolder;
using dtbench::testing::TempDir;

namespace {

DataConfig dataOf(DatasetKind dataset, const std::string& dir, bool download = false) {
  DataConfig data;
  data.dataset = dataset;
  data.dir = dir;
  data.download = download;
  return data;
}

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "x";
}

const char* const kCifar10Files[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                     "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};

}  // namespace

TEST_CASE("a sweep over CIFAR-10 needs its six batches in the data folder", "[sweep][data]") {
  TempDir dir;
  const std::string data = dir / "data";
  CHECK_THROWS_WITH(checkDataFolder(dataOf(DatasetKind::kCifar10, data)),
                    Catch::Contains("--data-dir " + data + " holds no complete CIFAR-10: " + data +
                                    "/cifar-10-batches-bin/data_batch_1.bin is missing; fetch it once with "
                                    "`dtbench train --dataset cifar10 --download --data-dir " + data));
  CHECK_THROWS_AS(checkDataFolder(dataOf(DatasetKind::kCifar10, data)), dtbench::common::UsageError);
  for (const char* name : kCifar10Files) touch(fs::path(data) / "cifar-10-batches-bin" / name);
  CHECK_NOTHROW(checkDataFolder(dataOf(DatasetKind::kCifar10, data)));
  fs::remove(fs::path(data) / "cifar-10-batches-bin" / "data_batch_4.bin");
  CHECK_THROWS_WITH(checkDataFolder(dataOf(DatasetKind::kCifar10, data)),
                    Catch::Contains("cifar-10-batches-bin/data_batch_4.bin is missing"));
  // The batches in the folder itself, as dtbench train also reads them.
  const std::string flat = dir / "flat";
  for (const char* name : kCifar10Files) touch(fs::path(flat) / name);
  CHECK_NOTHROW(checkDataFolder(dataOf(DatasetKind::kCifar10, flat)));
  // The default folder is named as such.
  CHECK_THROWS_WITH(checkDataFolder(dataOf(DatasetKind::kCifar10, "data")),
                    Catch::Contains("(dtbench train's default for --dataset cifar10)"));
}

TEST_CASE("with --download the CIFAR-10 folder must be one the download can write", "[sweep][data]") {
  TempDir dir;
  CHECK_NOTHROW(checkDataFolder(dataOf(DatasetKind::kCifar10, dir / "new/data", true)));
  std::ofstream(dir / "file") << "not a folder";
  CHECK_THROWS_WITH(checkDataFolder(dataOf(DatasetKind::kCifar10, dir / "file/data", true)),
                    Catch::Contains("--download fetches CIFAR-10 into --data-dir " + (dir / "file/data") + ", but " +
                                    (dir / "file") + " cannot be written (not a folder)"));
}

TEST_CASE("a sweep over Fashion-MNIST needs its four IDX files, plain or gzipped", "[sweep][data]") {
  TempDir dir;
  const fs::path data = dir.path() / "fm";
  CHECK_THROWS_WITH(checkDataFolder(dataOf(DatasetKind::kFashionMnist, data.string())),
                    Catch::Contains("holds no Fashion-MNIST: " + (data / "train-images-idx3-ubyte").string() +
                                    "[.gz] is missing; install Debian's dataset-fashion-mnist"));
  touch(data / "train-images-idx3-ubyte.gz");
  touch(data / "train-labels-idx1-ubyte");
  touch(data / "t10k-images-idx3-ubyte.gz");
  CHECK_THROWS_WITH(checkDataFolder(dataOf(DatasetKind::kFashionMnist, data.string())),
                    Catch::Contains("t10k-labels-idx1-ubyte[.gz] is missing"));
  touch(data / "t10k-labels-idx1-ubyte.gz");
  CHECK_NOTHROW(checkDataFolder(dataOf(DatasetKind::kFashionMnist, data.string())));
  CHECK_NOTHROW(checkDataFolder(dataOf(DatasetKind::kSynthetic, dir / "nothing")));
}
