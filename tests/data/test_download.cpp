// ensureCifar10 without a network: what it does before fetching anything. The real transfer
// over HTTP is tested by download_http_test.sh against a local server.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include <unistd.h>

#include "catch_torch.h"

#include "data/dataset.h"
#include "data/download.h"

using dtbench::data::DataError;
using dtbench::data::DownloadOptions;
namespace fs = std::filesystem;

namespace {

fs::path freshDir() {
  static std::atomic<int> counter{0};
  auto path = fs::temp_directory_path() /
              ("dtbench-test-download-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path);
  fs::create_directories(path);
  return path;
}

DownloadOptions nowhere() {
  DownloadOptions o;
  o.url = "http://127.0.0.1:9/never-contacted.tar.gz";  // the discard port: nothing listens
  return o;
}

}  // namespace

TEST_CASE("download: a complete CIFAR-10 folder is left alone", "[download]") {
  const fs::path dir = freshDir();
  fs::create_directories(dir / "cifar-10-batches-bin");
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                           "data_batch_5.bin", "test_batch.bin", "batches.meta.txt"}) {
    std::ofstream(dir / "cifar-10-batches-bin" / name) << "x";
  }
  std::ostringstream log;
  auto o = nowhere();
  o.log = &log;
  CHECK_NOTHROW(dtbench::data::ensureCifar10(dir.string(), o));
  CHECK_THAT(log.str(), Catch::Contains("nothing to download"));
  fs::remove_all(dir);
}

TEST_CASE("download: an incomplete CIFAR-10 folder is an error that says what to do", "[download]") {
  const fs::path dir = freshDir();
  fs::create_directories(dir / "cifar-10-batches-bin");
  std::ofstream(dir / "cifar-10-batches-bin" / "data_batch_1.bin") << "x";
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.string(), nowhere()),
                    Catch::Contains("data_batch_2.bin is missing") && Catch::Contains("remove it"));
  fs::remove_all(dir);
}

TEST_CASE("download: an unwritable data dir names it", "[download]") {
  if (!dtbench::data::downloadSupported()) {
    CHECK_THROWS_WITH(dtbench::data::ensureCifar10(freshDir().string(), nowhere()),
                      Catch::Contains("this build cannot download (built without libcurl/libarchive)"));
    return;
  }
  const fs::path dir = freshDir();
  std::ofstream(dir / "a-file") << "not a folder";
  const std::string inside = (dir / "a-file" / "data").string();
  CHECK_THROWS_AS(dtbench::data::ensureCifar10(inside, nowhere()), DataError);
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(inside, nowhere()),
                    Catch::Contains(inside) && Catch::Contains("writable --data-dir"));
  fs::remove_all(dir);
}
