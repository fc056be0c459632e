#pragma once
// IDX files, the format of MNIST and Fashion-MNIST (docs/reference.md, "Fashion-MNIST"), plain or
// gzip-compressed.
//
// Format: a big-endian int32 magic, then one big-endian int32 per dimension, then the uint8
// values, row-major. Images: magic 2051 (0x00000803), dimensions count, rows, cols. Labels: magic
// 2049 (0x00000801), dimension count. A gzipped file is recognized by its first two bytes
// (1f 8b), not by its name, and decompressed whole in memory (47 MB for Fashion-MNIST's
// training images).
//
// Checks, each a DataError that names the file and says what to do: the magic; every dimension
// >= 1; exactly the announced number of data bytes (a short file reports the header's dimensions
// and the byte offset, in the uncompressed stream, where the data end; extra bytes are an error
// too; the dimensions' product is compared with the bytes present without overflowing, so a
// header of 2^30 x 2^30 x 16 is a truncated file, not a 2^64-byte tensor); every label below
// numClasses (the message gives the item and its byte offset). A build without zlib reads plain
// files only and says so for a gzipped one.

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

namespace dtbench::data {

inline constexpr int32_t kIdxImagesMagic = 2051;
inline constexpr int32_t kIdxLabelsMagic = 2049;

// uint8 [count, rows, cols]. Throws DataError.
at::Tensor readIdxImages(const std::string& file);

// int64 [count], every value in [0, numClasses). Throws DataError.
at::Tensor readIdxLabels(const std::string& file, int64_t numClasses);

}  // namespace dtbench::data
