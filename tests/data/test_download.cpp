// ensureCifar10 without a network: the checks before fetching anything, and extraction of
// hand-made archives placed where a verified download would be. The real transfer over HTTP, and
// SIGINT/SIGTERM during it, are tested by test_download_http.sh and test_download_failures.sh.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "catch_torch.h"

#include "data/cifar10.h"
#include "data/dataset.h"
#include "data/download.h"
#include "data/md5.h"
#include "dtbench/build_config.h"
#include "file_size_limit.h"
#include "temp_dir.h"

#if DTBENCH_HAVE_DOWNLOAD
#include <archive.h>
#include <archive_entry.h>
#endif

using dtbench::data::DataError;
using dtbench::data::DownloadInterrupted;
using dtbench::data::DownloadOptions;
using dtbench::data::kCifar10FileBytes;
using dtbench::data::kCifar10RecordBytes;
using dtbench::testing::TempDir;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kBatches = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                           "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};

DownloadOptions nowhere() {
  DownloadOptions o;
  o.url = "http://127.0.0.1:9/never-contacted.tar.gz";  // the discard port: nothing listens
  return o;
}

// The official layout in dir/cifar-10-batches-bin with every batch `bytes` long (sparse: cheap).
fs::path writeLayout(const fs::path& dir, uintmax_t bytes) {
  const fs::path folder = dir / "cifar-10-batches-bin";
  fs::create_directories(folder);
  for (const auto& name : kBatches) {
    std::ofstream(folder / name).close();
    fs::resize_file(folder / name, bytes);
  }
  std::ofstream(folder / "batches.meta.txt") << "airplane\n";
  return folder;
}

#if DTBENCH_HAVE_DOWNLOAD

// Everything in `dir`, by name.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

// Writes dir/cifar-10-binary.tar.gz holding cifar-10-batches-bin/<name> of `size` bytes each
// (label byte 0, pixels 7), and returns options that accept it as a verified download.
DownloadOptions writeArchive(const fs::path& dir, const std::vector<std::pair<std::string, int64_t>>& members) {
  const fs::path file = dir / dtbench::data::kCifar10Archive;
  struct archive* out = archive_write_new();
  REQUIRE(out != nullptr);
  archive_write_add_filter_gzip(out);
  archive_write_set_format_pax_restricted(out);
  REQUIRE(archive_write_open_filename(out, file.c_str()) == ARCHIVE_OK);
  std::string record(static_cast<size_t>(kCifar10RecordBytes), '\7');
  record[0] = '\0';
  for (const auto& [name, size] : members) {
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, ("cifar-10-batches-bin/" + name).c_str());
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, size);
    REQUIRE(archive_write_header(out, entry) == ARCHIVE_OK);
    for (int64_t done = 0; done < size;) {
      const auto n = std::min<int64_t>(size - done, kCifar10RecordBytes);
      REQUIRE(archive_write_data(out, record.data(), static_cast<size_t>(n)) == n);
      done += n;
    }
    archive_entry_free(entry);
  }
  REQUIRE(archive_write_close(out) == ARCHIVE_OK);
  archive_write_free(out);
  DownloadOptions o = nowhere();
  o.md5 = dtbench::data::md5OfFile(file.string());
  return o;
}

std::vector<std::pair<std::string, int64_t>> layoutMembers(int64_t batchBytes) {
  std::vector<std::pair<std::string, int64_t>> members;
  for (const auto& name : kBatches) members.emplace_back(name, batchBytes);
  members.emplace_back("batches.meta.txt", 9);
  return members;
}

#endif  // DTBENCH_HAVE_DOWNLOAD

}  // namespace

TEST_CASE("download: a complete CIFAR-10 folder is left alone", "[download]") {
  TempDir dir;
  writeLayout(dir.path(), kCifar10FileBytes);
  std::ostringstream log;
  auto o = nowhere();
  o.log = &log;
  CHECK_NOTHROW(dtbench::data::ensureCifar10(dir.path().string(), o));
  CHECK_THAT(log.str(), Catch::Contains("nothing to download"));
}

TEST_CASE("download: an incomplete CIFAR-10 folder is an error that says what to do", "[download]") {
  TempDir dir;
  fs::create_directories(dir.path() / "cifar-10-batches-bin");
  std::ofstream(dir.path() / "cifar-10-batches-bin" / "data_batch_1.bin") << "x";
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.path().string(), nowhere()),
                    Catch::Contains("data_batch_1.bin has 1 bytes") && Catch::Contains("delete"));
  fs::remove(dir.path() / "cifar-10-batches-bin" / "data_batch_1.bin");
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.path().string(), nowhere()),
                    Catch::Contains("data_batch_1.bin is missing") && Catch::Contains("delete"));
}

TEST_CASE("download: a folder whose batch has the wrong size is not complete", "[download]") {
  // A full disk used to leave such a folder (short or zero-filled files) and later runs took it
  // as complete because only the files' presence was checked.
  TempDir dir;
  const fs::path folder = writeLayout(dir.path(), kCifar10FileBytes);
  fs::resize_file(folder / "data_batch_3.bin", 20 * kCifar10RecordBytes);
  std::ostringstream log;
  auto o = nowhere();
  o.log = &log;
  CHECK_THROWS_AS(dtbench::data::ensureCifar10(dir.path().string(), o), DataError);
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.path().string(), o),
                    Catch::Contains((folder).string() + " exists but is not complete") &&
                        Catch::Contains("data_batch_3.bin has 61460 bytes") &&
                        Catch::Contains(std::to_string(kCifar10FileBytes)) &&
                        Catch::Contains("delete the folder " + folder.string()) &&
                        Catch::Contains("run again with --download"));
  CHECK_THAT(log.str(), !Catch::Contains("nothing to download"));
  CHECK(fs::file_size(folder / "data_batch_3.bin") == 61460);  // the user's files are not touched
}

TEST_CASE("download: an unwritable data dir names it", "[download]") {
  if (!dtbench::data::downloadSupported()) {
    TempDir dir;
    CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.path().string(), nowhere()),
                      Catch::Contains("this build cannot download (built without libcurl/libarchive)"));
    return;
  }
  TempDir dir;
  std::ofstream(dir.path() / "a-file") << "not a folder";
  const std::string inside = (dir.path() / "a-file" / "data").string();
  CHECK_THROWS_AS(dtbench::data::ensureCifar10(inside, nowhere()), DataError);
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(inside, nowhere()),
                    Catch::Contains(inside) && Catch::Contains("writable --data-dir"));
}

#if DTBENCH_HAVE_DOWNLOAD

TEST_CASE("download: an archive whose batches have the wrong size is never moved into place", "[download]") {
  TempDir dir;
  const auto o = writeArchive(dir.path(), layoutMembers(20 * kCifar10RecordBytes));
  const std::string archive = (dir.path() / "cifar-10-binary.tar.gz").string();
  for (int attempt = 1; attempt <= 2; ++attempt) {  // the second run must not find it "complete"
    INFO("attempt " << attempt);
    CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.path().string(), o),
                      Catch::Contains(archive + " does not hold the CIFAR-10 binary layout") &&
                          Catch::Contains("data_batch_1.bin has 61460 bytes") &&
                          Catch::Contains(std::to_string(kCifar10FileBytes)) &&
                          Catch::Contains("delete " + archive));
    CHECK(listing(dir.path()) == std::vector<std::string>{"cifar-10-binary.tar.gz"});
  }
}

TEST_CASE("download: a write that fails while extracting names the file and the cause and keeps nothing",
          "[download]") {
  // RLIMIT_FSIZE stands in for a full disk without root: past it write(2) fails with EFBIG
  // (SIGXFSZ ignored), where a full disk gives ENOSPC (tests/file_size_limit.h).
  TempDir dir;
  const auto o = writeArchive(dir.path(), {{"data_batch_1.bin", kCifar10FileBytes}});
  std::string message = "no error";
  {
    const dtbench::testing::FileSizeLimit limit(1 << 20);
    try {
      dtbench::data::ensureCifar10(dir.path().string(), o);
    } catch (const std::exception& e) {
      message = e.what();
    }
  }
  CHECK_THAT(message, Catch::Contains("cannot write cifar-10-batches-bin/data_batch_1.bin") &&
                          Catch::Contains(dir.path().string()) && Catch::Contains(std::strerror(EFBIG)) &&
                          Catch::Contains("free some space") && Catch::Contains("nothing was kept"));
  CHECK(listing(dir.path()) == std::vector<std::string>{"cifar-10-binary.tar.gz"});
}

TEST_CASE("download: cancelling during extraction keeps nothing", "[download]") {
  TempDir dir;
  auto o = writeArchive(dir.path(), layoutMembers(kCifar10RecordBytes));
  o.cancelled = [] { return true; };
  CHECK_THROWS_AS(dtbench::data::ensureCifar10(dir.path().string(), o), DownloadInterrupted);
  CHECK_THROWS_WITH(dtbench::data::ensureCifar10(dir.path().string(), o),
                    Catch::Contains("interrupted (SIGINT or SIGTERM)") && Catch::Contains(dir.path().string()));
  CHECK(listing(dir.path()) == std::vector<std::string>{"cifar-10-binary.tar.gz"});
}

TEST_CASE("download: cancelling stops a transfer from a server that never answers", "[download]") {
  // A listening socket nobody accepts: the kernel completes the connection and curl then waits
  // for an answer that never comes (before, until its one-minute low-speed limit).
  const int server = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(server >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(server, reinterpret_cast<sockaddr*>(&address), length) == 0);
  REQUIRE(::listen(server, 4) == 0);
  REQUIRE(::getsockname(server, reinterpret_cast<sockaddr*>(&address), &length) == 0);

  TempDir dir;
  DownloadOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/cifar-10-binary.tar.gz";
  std::atomic<bool> stop{false};
  o.cancelled = [&stop] { return stop.load(); };
  std::thread signaller([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  CHECK_THROWS_MATCHES(dtbench::data::ensureCifar10(dir.path().string(), o), DownloadInterrupted,
                       Catch::Message("the download of " + o.url +
                                      " was interrupted (SIGINT or SIGTERM); nothing partial was left in " +
                                      dir.path().string() + "; run again with --download to start over"));
  signaller.join();
  ::close(server);
  CHECK(listing(dir.path()).empty());  // no .part file
}

#endif  // DTBENCH_HAVE_DOWNLOAD
