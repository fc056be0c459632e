#include "data/download.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <system_error>
#include <utility>
#include <vector>

#include "data/cifar10.h"
#include "data/dataset.h"
#include "data/md5.h"
#include "dtbench/build_config.h"

#if DTBENCH_HAVE_DOWNLOAD
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#endif

namespace dtbench::data {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kCifar10Files = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
    "data_batch_5.bin", "test_batch.bin",   "batches.meta.txt"};

// The first file of the official layout missing from `folder`, or "" when it is complete.
std::string firstMissing(const fs::path& folder) {
  std::error_code error;
  for (const auto& name : kCifar10Files) {
    if (!fs::is_regular_file(folder / name, error)) return (folder / name).string();
  }
  return "";
}

void say(const DownloadOptions& options, const std::string& line) {
  if (options.log != nullptr) *options.log << "dtbench: " << line << std::endl;
}

#if DTBENCH_HAVE_DOWNLOAD

std::string uniqueSuffix() {
  std::random_device random;
  return std::to_string(::getpid()) + "-" + std::to_string(random());
}

// Removes `path` (file or folder) when it goes out of scope, unless released.
class RemoveOnExit {
 public:
  explicit RemoveOnExit(fs::path path) : path_(std::move(path)) {}
  ~RemoveOnExit() {
    if (path_.empty()) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  RemoveOnExit(const RemoveOnExit&) = delete;
  RemoveOnExit& operator=(const RemoveOnExit&) = delete;
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

struct FileSink {
  FILE* file = nullptr;
  int error = 0;  // errno of the first failed write
};

size_t writeToFile(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<FileSink*>(user);
  const size_t bytes = size * count;
  if (std::fwrite(data, 1, bytes, sink->file) != bytes) {
    sink->error = errno;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  return bytes;
}

// Fetches `url` into `target` (created here). Throws DataError with curl's message.
void fetch(const std::string& url, const fs::path& target) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(target.c_str(), "wb"), &std::fclose);
  if (!file) {
    throw DataError("cannot write " + target.string() + ": " + std::strerror(errno) +
                    "; choose a writable --data-dir");
  }
  FileSink sink{file.get(), 0};
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) throw DataError("libcurl could not start a transfer for " + url);
  char message[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, &writeToFile);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);  // HTTP >= 400 is an error
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1024L);  // give up below 1 KB/s ...
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, 60L);     // ... for a minute
  const CURLcode code = curl_easy_perform(curl.get());
  if (code == CURLE_WRITE_ERROR && sink.error != 0) {
    throw DataError("cannot write " + target.string() + " while downloading " + url + ": " +
                    std::strerror(sink.error) + "; free some space or choose another --data-dir");
  }
  if (code != CURLE_OK) {
    throw DataError("cannot download " + url + ": " +
                    (message[0] != '\0' ? std::string(message) : curl_easy_strerror(code)) +
                    "; check the network (and https_proxy), or give a reachable mirror with "
                    "--download-url, or put the extracted cifar-10-batches-bin/ into --data-dir");
  }
  if (std::fflush(file.get()) != 0 || std::fclose(file.release()) != 0) {
    throw DataError("cannot write " + target.string() + ": " + std::strerror(errno) +
                    "; free some space or choose another --data-dir");
  }
}

using ReadArchive = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// A member name that stays inside the extraction folder: relative, no "..".
bool safeMemberName(const std::string& name) {
  const fs::path path(name);
  if (name.empty() || path.is_absolute()) return false;
  for (const auto& part : path) {
    if (part == "..") return false;
  }
  return true;
}

// Extracts the regular files and folders of `archiveFile` under `folder`.
void extract(const fs::path& archiveFile, const fs::path& folder) {
  ReadArchive in(archive_read_new(), &archive_read_free);
  ReadArchive out(archive_write_disk_new(), &archive_write_free);
  archive_read_support_filter_gzip(in.get());
  archive_read_support_format_tar(in.get());
  // Only regular files and folders are written, so the archive cannot plant a link to follow;
  // links above the data directory are the user's own and must keep working.
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  auto fail = [&](struct archive* which, const std::string& what) {
    throw DataError("cannot extract " + archiveFile.string() + " (" + what + ": " +
                    (archive_error_string(which) ? archive_error_string(which) : "unknown error") +
                    "); remove it and run again with --download, or check the space in --data-dir");
  };
  if (archive_read_open_filename(in.get(), archiveFile.c_str(), 1 << 20) != ARCHIVE_OK) {
    fail(in.get(), "open");
  }
  while (true) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(in.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN) fail(in.get(), "read");
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    const auto type = archive_entry_filetype(entry);
    const bool wanted = (type == AE_IFREG || type == AE_IFDIR) && archive_entry_hardlink(entry) == nullptr;
    if (!wanted || !safeMemberName(name)) {
      archive_read_data_skip(in.get());
      continue;
    }
    archive_entry_set_pathname(entry, (folder / name).c_str());
    if (archive_write_header(out.get(), entry) < ARCHIVE_WARN) fail(out.get(), "write " + name);
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    int readStatus = ARCHIVE_OK;
    while ((readStatus = archive_read_data_block(in.get(), &block, &size, &offset)) == ARCHIVE_OK) {
      if (archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN) {
        fail(out.get(), "write " + name);
      }
    }
    if (readStatus != ARCHIVE_EOF) fail(in.get(), "read " + name);
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN) fail(out.get(), "write " + name);
  }
}

#endif  // DTBENCH_HAVE_DOWNLOAD

}  // namespace

bool downloadSupported() { return DTBENCH_HAVE_DOWNLOAD == 1; }

void ensureCifar10(const std::string& dataDir, const DownloadOptions& options) {
  const fs::path dir(dataDir);
  const fs::path target = dir / kCifar10Folder;
  std::error_code error;
  if (firstMissing(target).empty()) {
    say(options, "CIFAR-10 is already complete in " + target.string() + ": nothing to download");
    return;
  }
  if (fs::exists(target, error)) {
    throw DataError(target.string() + " exists but is incomplete (" + firstMissing(target) +
                    " is missing): remove it and run again with --download");
  }
  if (!downloadSupported()) {
    throw DataError(
        "this build cannot download (built without libcurl/libarchive): download and extract " +
        options.url + " into " + dir.string() +
        " yourself, or rebuild with libcurl4-openssl-dev and libarchive-dev installed and "
        "-DDTBENCH_WITH_DOWNLOAD=ON");
  }
#if DTBENCH_HAVE_DOWNLOAD
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    throw DataError("cannot create --data-dir " + dir.string() + ": " +
                    (error ? error.message() : "not a directory") + "; choose a writable --data-dir");
  }
  const fs::path archiveFile = dir / kCifar10Archive;
  if (fs::exists(archiveFile, error)) {
    const std::string sum = md5OfFile(archiveFile.string());
    if (sum != options.md5) {
      say(options, archiveFile.string() + " has MD5 " + sum + ", not " + options.md5 + ": removing it");
      fs::remove(archiveFile, error);
    } else {
      say(options, "reusing " + archiveFile.string() + " (MD5 verified)");
    }
  }
  if (!fs::exists(archiveFile, error)) {
    const fs::path part = dir / (std::string(kCifar10Archive) + ".part-" + uniqueSuffix());
    RemoveOnExit removePart(part);
    say(options, "downloading " + options.url + " into " + part.string());
    fetch(options.url, part);
    const std::string sum = md5OfFile(part.string());
    if (sum != options.md5) {
      throw DataError("the download from " + options.url + " has MD5 " + sum + " but " +
                      options.md5 +
                      " was expected: it is corrupt or not the CIFAR-10 binary archive, and was "
                      "removed; run again (a transfer error), or give the mirror's checksum with "
                      "--download-md5 if --download-url points at a different file");
    }
    fs::rename(part, archiveFile, error);
    if (error) {
      throw DataError("cannot rename " + part.string() + " to " + archiveFile.string() + ": " +
                      error.message() + "; choose a writable --data-dir");
    }
    removePart.release();
    say(options, "MD5 verified: " + sum);
  }

  const fs::path scratch = dir / (".cifar-10-extract-" + uniqueSuffix());
  RemoveOnExit removeScratch(scratch);
  fs::create_directories(scratch, error);
  if (error) {
    throw DataError("cannot create " + scratch.string() + ": " + error.message() +
                    "; choose a writable --data-dir");
  }
  say(options, "extracting " + archiveFile.string());
  extract(archiveFile, scratch);
  const std::string missing = firstMissing(scratch / kCifar10Folder);
  if (!missing.empty()) {
    throw DataError(archiveFile.string() + " does not hold the CIFAR-10 binary layout (" +
                    fs::path(missing).lexically_relative(scratch).string() +
                    " is missing): remove it and run again with --download, or check --download-url");
  }
  fs::rename(scratch / kCifar10Folder, target, error);
  if (error) {
    throw DataError("cannot move the extracted files to " + target.string() + ": " +
                    error.message() + "; remove " + target.string() + " if it exists and run again");
  }
  say(options, "CIFAR-10 is ready in " + target.string());
#endif
}

}  // namespace dtbench::data
