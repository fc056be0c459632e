#include "data/cifar10.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <system_error>

namespace dtbench::data {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxLabel = 9;
const std::vector<double> kCifar10Mean = {0.4914, 0.4822, 0.4465};
const std::vector<double> kCifar10Std = {0.2023, 0.1994, 0.2010};

std::string howToGetCifar10(const std::string& dir) {
  return "download and extract cifar-10-binary.tar.gz from "
         "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz into " +
         dir + " (or run with --download), or use --dataset synthetic";
}

int64_t fileSize(const std::string& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw DataError("CIFAR-10 file " + file + " is missing or not a regular file" +
                    (error ? " (" + error.message() + ")" : std::string()) +
                    ": check --data-dir");
  }
  const auto size = fs::file_size(file, error);
  if (error) {
    throw DataError("cannot read the size of CIFAR-10 file " + file + ": " + error.message());
  }
  return static_cast<int64_t>(size);
}

// Reads `file` (of `size` bytes) in one read into `buffer`.
void readWhole(const std::string& file, int64_t size, std::vector<char>& buffer) {
  buffer.resize(static_cast<size_t>(size));
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw DataError("cannot open CIFAR-10 file " + file + " for reading: check its permissions");
  }
  in.read(buffer.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) {
    throw DataError("could read only " + std::to_string(in.gcount()) + " of the " +
                    std::to_string(size) + " bytes of CIFAR-10 file " + file +
                    ": is it being written or on a failing disk?");
  }
}

}  // namespace

Dataset readCifar10Files(const std::vector<std::string>& files, const std::string& name) {
  if (files.empty()) {
    throw std::invalid_argument("readCifar10Files: no files given for " + name);
  }
  std::vector<int64_t> records;
  int64_t total = 0;
  for (const auto& file : files) {
    const int64_t size = fileSize(file);
    if (size == 0 || size % kCifar10RecordBytes != 0) {
      throw DataError("CIFAR-10 file " + file + " has " + std::to_string(size) +
                      " bytes, which is not a positive multiple of the record size " +
                      std::to_string(kCifar10RecordBytes) + " (official files have " +
                      std::to_string(kCifar10FileBytes) +
                      "): it is truncated or not a CIFAR-10 binary file; download and extract "
                      "cifar-10-binary.tar.gz again");
    }
    records.push_back(size / kCifar10RecordBytes);
    total += records.back();
  }

  Dataset dataset;
  dataset.name = name;
  dataset.images = at::empty({total, 3, 32, 32}, at::kByte);
  dataset.labels = at::empty({total}, at::kLong);
  dataset.numClasses = 10;
  dataset.mean = kCifar10Mean;
  dataset.std = kCifar10Std;
  auto* images = dataset.images.data_ptr<uint8_t>();
  auto* labels = dataset.labels.data_ptr<int64_t>();

  std::vector<char> buffer;
  int64_t n = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    readWhole(files[f], records[f] * kCifar10RecordBytes, buffer);
    const auto* record = reinterpret_cast<const uint8_t*>(buffer.data());
    for (int64_t r = 0; r < records[f]; ++r, ++n, record += kCifar10RecordBytes) {
      if (record[0] > kMaxLabel) {
        throw DataError("CIFAR-10 file " + files[f] + ": record " + std::to_string(r) +
                        " (byte offset " + std::to_string(r * kCifar10RecordBytes) +
                        ") has label " + std::to_string(record[0]) +
                        ", outside 0..9: the file is corrupt or not a CIFAR-10 binary file; "
                        "download and extract cifar-10-binary.tar.gz again");
      }
      labels[n] = record[0];
      std::memcpy(images + n * kCifar10ImageBytes, record + 1, kCifar10ImageBytes);
    }
  }
  return dataset;
}

DatasetSplits loadCifar10(const std::string& dataDir) {
  const fs::path given(dataDir);
  const fs::path nested = given / kCifar10Folder;
  std::error_code error;
  fs::path folder;
  if (fs::is_directory(nested, error)) {
    folder = nested;
  } else if (fs::exists(given / "data_batch_1.bin", error)) {
    folder = given;
  } else {
    throw DataError("CIFAR-10 not found: looked for " + (nested / "data_batch_1.bin").string() +
                    " and " + (given / "data_batch_1.bin").string() + "; " +
                    howToGetCifar10(given.string()));
  }

  std::vector<std::string> trainFiles;
  for (int i = 1; i <= 5; ++i) {
    trainFiles.push_back((folder / ("data_batch_" + std::to_string(i) + ".bin")).string());
  }
  const std::vector<std::string> testFiles = {(folder / "test_batch.bin").string()};
  for (const auto& files : {trainFiles, testFiles}) {
    for (const auto& file : files) {
      if (!fs::exists(file, error)) {
        throw DataError("CIFAR-10 is incomplete: " + file + " is missing; " +
                        howToGetCifar10(given.string()));
      }
    }
  }

  DatasetSplits splits;
  splits.train = readCifar10Files(trainFiles, "cifar10/train");
  splits.test = readCifar10Files(testFiles, "cifar10/test");
  return splits;
}

}  // namespace dtbench::data
