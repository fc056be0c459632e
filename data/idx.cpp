#include "data/idx.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iosfwd>
#include <limits>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "dtbench/build_config.h"

#if DTBENCH_HAVE_ZLIB
#include <zlib.h>
#endif

namespace dtbench::data {

namespace {

constexpr const char* kGetItAgain =
    "get the file again (Debian: apt-get install --reinstall dataset-fashion-mnist)";

// The first two bytes of a gzip stream (RFC 1952).
bool looksGzipped(const std::string& file) {
  std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) {
    throw DataError("cannot open IDX file " + file + ": " + std::strerror(errno) +
                    "; check --data-dir and the file's permissions");
  }
  unsigned char magic[2] = {0, 0};
  const size_t got = std::fread(magic, 1, 2, in.get());
  return got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::vector<uint8_t> readPlain(const std::string& file) {
  std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) {
    throw DataError("cannot open IDX file " + file + ": " + std::strerror(errno) +
                    "; check --data-dir and the file's permissions");
  }
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> chunk(1 << 20);
  size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), in.get())) > 0) {
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
  }
  if (std::ferror(in.get())) {
    throw DataError("error reading IDX file " + file + " after " + std::to_string(bytes.size()) +
                    " bytes: " + std::strerror(errno) + "; is the disk failing?");
  }
  return bytes;
}

std::vector<uint8_t> readGzipped(const std::string& file) {
#if DTBENCH_HAVE_ZLIB
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(file.c_str(), "rb"), &gzclose);
  if (!in) {
    throw DataError("cannot open IDX file " + file + ": " + std::strerror(errno) +
                    "; check --data-dir and the file's permissions");
  }
  gzbuffer(in.get(), 1 << 20);
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> chunk(1 << 22);
  while (true) {
    const int got = gzread(in.get(), chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(in.get(), &code);
      throw DataError("gzipped IDX file " + file + " is truncated or corrupt after " +
                      std::to_string(bytes.size()) + " uncompressed bytes (zlib: " + message +
                      "); " + kGetItAgain);
    }
    if (got == 0) break;
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + got);
  }
  int code = 0;
  const char* message = gzerror(in.get(), &code);
  if (code != Z_OK) {
    // A gzip stream cut short reads as end of file with Z_BUF_ERROR ("unexpected end of file").
    throw DataError("gzipped IDX file " + file + " ends early, after " +
                    std::to_string(bytes.size()) + " uncompressed bytes (zlib: " + message +
                    "): it is truncated; " + kGetItAgain);
  }
  return bytes;
#else
  throw DataError("IDX file " + file +
                  " is gzipped but this build has no zlib: gunzip it (gunzip -k " + file +
                  ") and point --data-dir at the plain files, or rebuild with zlib1g-dev");
#endif
}

std::vector<uint8_t> readIdxFile(const std::string& file) {
  return looksGzipped(file) ? readGzipped(file) : readPlain(file);
}

int64_t bigEndian32(const std::vector<uint8_t>& bytes, size_t offset) {
  return (int64_t{bytes[offset]} << 24) | (int64_t{bytes[offset + 1]} << 16) |
         (int64_t{bytes[offset + 2]} << 8) | int64_t{bytes[offset + 3]};
}

// Checks magic and dimensions; returns the dimensions. `what` is "image" or "label".
std::vector<int64_t> readHeader(const std::vector<uint8_t>& bytes, const std::string& file,
                                int64_t magic, size_t dims, const char* what) {
  const size_t headerBytes = 4 * (1 + dims);
  if (bytes.size() >= 4 && bigEndian32(bytes, 0) != magic) {
    throw DataError("IDX file " + file + " has magic number " + std::to_string(bigEndian32(bytes, 0)) +
                    ", not " + std::to_string(magic) + " (" + what + "s): it is not an IDX " + what +
                    " file (images and labels swapped?) or it is corrupt; " + kGetItAgain);
  }
  if (bytes.size() < headerBytes) {
    throw DataError("IDX " + std::string(what) + " file " + file + " is truncated: it ends at byte offset " +
                    std::to_string(bytes.size()) + ", inside the " + std::to_string(headerBytes) +
                    "-byte header; " + kGetItAgain);
  }
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < dims; ++d) {
    sizes.push_back(bigEndian32(bytes, 4 * (d + 1)));
    if (sizes.back() < 1 || sizes.back() > (int64_t{1} << 30)) {
      throw DataError("IDX file " + file + ": dimension " + std::to_string(d) + " is " +
                      std::to_string(sizes.back()) + " (byte offset " + std::to_string(4 * (d + 1)) +
                      "); the header is corrupt; " + kGetItAgain);
    }
  }
  // The product of the dimensions is checked for overflow factor by factor, so a header like
  // 2^30 x 2^30 x 16 (2^64 bytes) cannot wrap around in int64 and match the bytes present.
  const auto available = static_cast<int64_t>(bytes.size() - headerBytes);
  int64_t expected = 1;
  bool beyond = false;  // the product does not fit in int64: far more than any file holds
  for (const int64_t size : sizes) {
    if (expected > std::numeric_limits<int64_t>::max() / size) {
      beyond = true;
      break;
    }
    expected *= size;
  }
  if (beyond || available != expected) {
    std::string shape;
    for (const int64_t size : sizes) shape += (shape.empty() ? "" : " x ") + std::to_string(size);
    const std::string announced =
        beyond ? "more data bytes than 64 bits can count, far more than the " + std::to_string(available) +
                     " data bytes it holds from byte offset "
               : std::to_string(expected) + " data bytes from byte offset ";
    throw DataError("IDX " + std::string(what) + " file " + file + " announces " + shape + " " + what +
                    "s in its header: " + announced + std::to_string(headerBytes) +
                    ", but its data end at byte offset " + std::to_string(bytes.size()) +
                    (beyond || available < expected ? ": the file is truncated or its header is corrupt; "
                                                    : ": the file has extra bytes; ") +
                    kGetItAgain);
  }
  return sizes;
}

}  // namespace

at::Tensor readIdxImages(const std::string& file) {
  const std::vector<uint8_t> bytes = readIdxFile(file);
  const auto sizes = readHeader(bytes, file, kIdxImagesMagic, 3, "image");
  auto images = at::empty({sizes[0], sizes[1], sizes[2]}, at::kByte);
  std::memcpy(images.data_ptr<uint8_t>(), bytes.data() + 16, static_cast<size_t>(images.numel()));
  return images;
}

at::Tensor readIdxLabels(const std::string& file, int64_t numClasses) {
  const std::vector<uint8_t> bytes = readIdxFile(file);
  const auto sizes = readHeader(bytes, file, kIdxLabelsMagic, 1, "label");
  auto labels = at::empty({sizes[0]}, at::kLong);
  auto* out = labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < sizes[0]; ++i) {
    const uint8_t label = bytes[static_cast<size_t>(8 + i)];
    if (label >= numClasses) {
      throw DataError("IDX label file " + file + ": item " + std::to_string(i) + " (byte offset " +
                      std::to_string(8 + i) + ") has label " + std::to_string(label) +
                      ", outside 0.." + std::to_string(numClasses - 1) +
                      ": the file is corrupt or not a 10-class label file; " + kGetItAgain);
    }
    out[i] = label;
  }
  return labels;
}

}  // namespace dtbench::data
