// MD5 against the test suite of RFC 1321 (appendix A.5) and a file.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include <unistd.h>

#include "catch_torch.h"

#include "data/dataset.h"
#include "data/md5.h"

using dtbench::data::Md5;

namespace {

std::string md5(const std::string& text) {
  Md5 m;
  m.update(text);
  return m.hexDigest();
}

}  // namespace

TEST_CASE("MD5 matches the RFC 1321 test suite", "[md5]") {
  CHECK(md5("") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(md5("a") == "0cc175b9c0f1b6a831c399e269772661");
  CHECK(md5("abc") == "900150983cd24fb0d6963f7d28e17f72");
  CHECK(md5("message digest") == "f96b697d7cb7938d525a2f31aaf161d0");
  CHECK(md5("abcdefghijklmnopqrstuvwxyz") == "c3fcd3d76192e4007dfb496cca67e13b");
  CHECK(md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") ==
        "d174ab98d277d9f5a5611c2c9f419d9f");
  CHECK(md5("12345678901234567890123456789012345678901234567890123456789012345678901234567890") ==
        "57edf4a22be3c955ac49da2e2107b67a");
}

TEST_CASE("MD5 is the same whatever the update sizes", "[md5]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>((i * 7 + 3) % 256);
  const std::string whole = md5(text);
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 127u, 999u}) {
    Md5 m;
    for (size_t at = 0; at < text.size(); at += piece) m.update(text.substr(at, piece));
    INFO("pieces of " << piece);
    CHECK(m.hexDigest() == whole);
  }
  // hexDigest leaves the object usable: more data gives the digest of the longer message.
  Md5 m;
  m.update("message ");
  CHECK(m.hexDigest() == md5("message "));
  m.update("digest");
  CHECK(m.hexDigest() == "f96b697d7cb7938d525a2f31aaf161d0");
}

TEST_CASE("MD5 of a file and of a missing file", "[md5]") {
  const auto file = std::filesystem::temp_directory_path() / ("dtbench-md5-" + std::to_string(::getpid()));
  {
    std::ofstream out(file, std::ios::binary);
    out << "abc";
  }
  CHECK(dtbench::data::md5OfFile(file.string()) == "900150983cd24fb0d6963f7d28e17f72");
  std::filesystem::remove(file);
  CHECK_THROWS_AS(dtbench::data::md5OfFile(file.string()), dtbench::data::DataError);
  CHECK_THROWS_WITH(dtbench::data::md5OfFile(file.string()), Catch::Contains(file.string()));
}
