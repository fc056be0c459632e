#pragma once
// CIFAR-10 from the official binary files (docs/reference.md, "CIFAR-10").
//
// Format: a file is a sequence of 3073-byte records, 1 label byte (0..9) followed by 3072 pixel
// bytes: the 1024 red, then 1024 green, then 1024 blue values of a 32x32 image, row-major. The
// official files hold 10,000 records each (30,730,000 bytes). Because the pixels are already
// planar, a record's 3072 bytes are exactly one [3, 32, 32] image.
//
// Every file is read whole in one read and checked before anything is kept: a size that is not a
// positive multiple of 3073 (truncated, or not a CIFAR-10 binary file) or a label byte above 9 is a
// DataError naming the file (and the record and byte offset for a bad label).

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace dtbench::data {

inline constexpr int64_t kCifar10RecordBytes = 3073;
inline constexpr int64_t kCifar10ImageBytes = 3072;
inline constexpr int64_t kCifar10RecordsPerFile = 10000;
inline constexpr int64_t kCifar10FileBytes = kCifar10RecordsPerFile * kCifar10RecordBytes;  // official
inline constexpr const char* kCifar10Folder = "cifar-10-batches-bin";

// The records of `files`, in order, as one Dataset named `name`: images uint8 [N, 3, 32, 32],
// labels int64 [N], numClasses 10 and CIFAR-10's mean/std. Throws DataError.
Dataset readCifar10Files(const std::vector<std::string>& files, const std::string& name);

// train = data_batch_1..5.bin, test = test_batch.bin, from `dataDir`/cifar-10-batches-bin/ or
// from `dataDir` itself when it is that folder. A missing file is a DataError that says where it
// looked and how to get the data.
DatasetSplits loadCifar10(const std::string& dataDir);

}  // namespace dtbench::data
