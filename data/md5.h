#pragma once
// MD5 (RFC 1321), to check a download against its published checksum (CIFAR-10's archive is
// published with an MD5). Integrity against corruption only: MD5 is no defence against a forger.
//
// Contract: Md5 accumulates bytes with update(); hexDigest() returns the 32 lowercase hex digits
// of everything given so far and leaves the object usable (it finalizes a copy). The RFC 1321
// test suite (appendix A.5) is in tests/data/test_md5.cpp.
//
// Cost: one 64-byte block per 64 rounds of 32-bit arithmetic, ~500 MB/s on one core: the 170 MB
// CIFAR-10 archive is checked in well under a second.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dtbench::data {

class Md5 {
 public:
  Md5();
  void update(const void* data, size_t size);
  void update(const std::string& text) { update(text.data(), text.size()); }
  std::string hexDigest() const;

 private:
  void transform(const uint8_t* block);

  std::array<uint32_t, 4> state_;
  std::array<uint8_t, 64> buffer_{};
  uint64_t length_ = 0;  // bytes given so far
};

// The MD5 of a whole file, as 32 lowercase hex digits. Throws DataError naming the file when it
// cannot be read.
std::string md5OfFile(const std::string& file);

}  // namespace dtbench::data
