#include "data/download.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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

// The six record files; the official ones each hold exactly kCifar10FileBytes.
bool isBatch(const std::string& name) { return fs::path(name).extension() == ".bin"; }

// What keeps `folder` from being the official layout, relative to it: the first file missing, or
// the first batch whose size is not the official one ("" when it is complete). A batch of the
// right length can still be corrupt, but never one cut short by a full disk or a foreign archive.
std::string whyIncomplete(const fs::path& folder) {
  std::error_code error;
  for (const auto& name : kCifar10Files) {
    const fs::path file = folder / name;
    if (!fs::is_regular_file(file, error)) return name + " is missing";
    if (!isBatch(name)) continue;
    const auto size = fs::file_size(file, error);
    if (error) return "cannot read the size of " + name + " (" + error.message() + ")";
    if (static_cast<int64_t>(size) != kCifar10FileBytes) {
      return name + " has " + std::to_string(size) + " bytes, not the " +
             std::to_string(kCifar10FileBytes) + " (" + std::to_string(kCifar10RecordsPerFile) +
             " records of " + std::to_string(kCifar10RecordBytes) + " bytes) of the official file";
    }
  }
  return "";
}

void say(const DownloadOptions& options, const std::string& line) {
  if (options.log != nullptr) *options.log << "dtbench: " << line << std::endl;
}

#if DTBENCH_HAVE_DOWNLOAD

// The space the extracted batches take, for messages about a full disk.
std::string extractedSize() {
  const auto batches = std::count_if(kCifar10Files.begin(), kCifar10Files.end(), &isBatch);
  return std::to_string(batches * kCifar10FileBytes / 1000000) + " MB";
}

bool cancelled(const DownloadOptions& options) { return options.cancelled && options.cancelled(); }

[[noreturn]] void throwInterrupted(const std::string& what, const fs::path& dir) {
  throw DownloadInterrupted(what + " was interrupted (SIGINT or SIGTERM); nothing partial was left in " +
                            dir.string() + "; run again with --download to start over");
}

void stopIfCancelled(const DownloadOptions& options, const std::string& what, const fs::path& dir) {
  if (cancelled(options)) throwInterrupted(what, dir);
}

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

// libcurl's progress callback: called often while data flow and about once a second while the
// server sends nothing, so a stalled transfer still notices a cancellation within a second.
int abortIfCancelled(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return cancelled(*static_cast<const DownloadOptions*>(user)) ? 1 : 0;  // 1: CURLE_ABORTED_BY_CALLBACK
}

// Fetches options.url into `target` (created here). Throws DataError with curl's message, or
// DownloadInterrupted; the caller removes `target`.
void fetch(const DownloadOptions& options, const fs::path& target) {
  const std::string& url = options.url;
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
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, &abortIfCancelled);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, &options);
  curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);  // enables the callback above
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);  // HTTP >= 400 is an error
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1024L);  // give up below 1 KB/s ...
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, 60L);     // ... for a minute
  const CURLcode code = curl_easy_perform(curl.get());
  if (code == CURLE_ABORTED_BY_CALLBACK) throwInterrupted("the download of " + url, target.parent_path());
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
  if (std::fflush(file.get()) != 0 || ::fsync(::fileno(file.get())) != 0 || std::fclose(file.release()) != 0) {
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

// Closes a descriptor on scope exit unless close() was already called (and checked) by hand.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  int close() {
    const int status = ::close(fd_);
    fd_ = -1;
    return status;
  }

 private:
  int fd_;
};

// Extracts the regular files and folders of `archiveFile` under `folder`. The files are written
// here rather than by libarchive's disk writer, which reports a failed write(2) as a mere
// warning and then extends the file to its announced length: a full disk would leave
// full-length, zero-filled files. Here every write(2), fsync(2) and close(2) is checked.
void extract(const fs::path& archiveFile, const fs::path& folder, const DownloadOptions& options) {
  const fs::path dir = folder.parent_path();
  ReadArchive in(archive_read_new(), &archive_read_free);
  archive_read_support_filter_gzip(in.get());
  archive_read_support_format_tar(in.get());
  auto failRead = [&](const std::string& what) {
    throw DataError("cannot extract " + archiveFile.string() + " (" + what + ": " +
                    (archive_error_string(in.get()) ? archive_error_string(in.get()) : "unknown error") +
                    "): it is corrupt; remove it and run again with --download");
  };
  if (archive_read_open_filename(in.get(), archiveFile.c_str(), 1 << 20) != ARCHIVE_OK) failRead("open");
  std::vector<char> buffer(1 << 20);
  while (true) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(in.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN) failRead("read");
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    const auto type = archive_entry_filetype(entry);
    const bool wanted = (type == AE_IFREG || type == AE_IFDIR) && archive_entry_hardlink(entry) == nullptr;
    if (!wanted || !safeMemberName(name)) {
      archive_read_data_skip(in.get());
      continue;
    }
    const fs::path path = folder / name;
    const std::string member = name + " of " + archiveFile.string();
    auto failWrite = [&](int error, const std::string& detail) {
      throw DataError("cannot write " + member + " into " + dir.string() + detail + ": " +
                      std::strerror(error) + "; free some space (CIFAR-10 takes about " + extractedSize() +
                      ") or choose another --data-dir, and run again; nothing was kept");
    };
    std::error_code error;
    fs::create_directories(type == AE_IFDIR ? path : path.parent_path(), error);
    if (error) failWrite(error.value(), " (creating its folder)");
    if (type == AE_IFDIR) continue;

    Descriptor out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (out.get() < 0) failWrite(errno, " (creating it)");
    int64_t written = 0;
    while (true) {
      stopIfCancelled(options, "extracting " + archiveFile.string(), dir);
      // archive_read_data gives the data in order, holes of sparse members as zeros.
      const la_ssize_t got = archive_read_data(in.get(), buffer.data(), buffer.size());
      if (got < 0) failRead("read " + name);
      if (got == 0) break;
      for (la_ssize_t done = 0; done < got;) {
        // A short write is retried for the rest; the retry returns the cause (ENOSPC, EFBIG).
        const ssize_t n = ::write(out.get(), buffer.data() + done, static_cast<size_t>(got - done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          failWrite(n < 0 ? errno : EIO,
                    " (after " + std::to_string(written + done) + " of " +
                        std::to_string(archive_entry_size(entry)) + " bytes)");
        }
        done += n;
      }
      written += got;
    }
    // A delayed-allocation or network filesystem may report a full disk only here.
    if (::fsync(out.get()) != 0) failWrite(errno, " (syncing it)");
    if (out.close() != 0) failWrite(errno, " (closing it)");
    if (archive_entry_size_is_set(entry) && written != archive_entry_size(entry)) {
      throw DataError("cannot extract " + member + ": it holds " + std::to_string(written) +
                      " bytes but its header announces " + std::to_string(archive_entry_size(entry)) +
                      "; the archive is corrupt: remove it and run again with --download");
    }
  }
}

#endif  // DTBENCH_HAVE_DOWNLOAD

}  // namespace

bool downloadSupported() { return DTBENCH_HAVE_DOWNLOAD == 1; }

void ensureCifar10(const std::string& dataDir, const DownloadOptions& options) {
  const fs::path dir(dataDir);
  const fs::path target = dir / kCifar10Folder;
  std::error_code error;
  const std::string problem = whyIncomplete(target);
  if (problem.empty()) {
    say(options, "CIFAR-10 is already complete in " + target.string() + ": nothing to download");
    return;
  }
  if (fs::exists(target, error)) {
    throw DataError(target.string() + " exists but is not complete: " + problem +
                    "; delete the folder " + target.string() + " and run again with --download");
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
    stopIfCancelled(options, "the download of " + options.url, dir);
    say(options, "downloading " + options.url + " into " + part.string());
    fetch(options, part);
    stopIfCancelled(options, "the download of " + options.url, dir);
    const std::string sum = md5OfFile(part.string());
    if (sum != options.md5) {
      throw DataError("the download from " + options.url + " has MD5 " + sum + " but " +
                      options.md5 +
                      " was expected: it is corrupt or not the CIFAR-10 binary archive, and was "
                      "removed; run again (a transfer error), or give the mirror's checksum with "
                      "--download-md5 if --download-url points at a different file");
    }
    stopIfCancelled(options, "the download of " + options.url, dir);
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
  extract(archiveFile, scratch, options);
  const std::string wrong = whyIncomplete(scratch / kCifar10Folder);
  if (!wrong.empty()) {
    throw DataError(archiveFile.string() + " does not hold the CIFAR-10 binary layout (" +
                    std::string(kCifar10Folder) + "/" + wrong +
                    "): nothing was kept; delete " + archiveFile.string() +
                    " and run again with --download, or check --download-url and --download-md5");
  }
  stopIfCancelled(options, "extracting " + archiveFile.string(), dir);
  fs::rename(scratch / kCifar10Folder, target, error);
  if (error) {
    throw DataError("cannot move the extracted files to " + target.string() + ": " +
                    error.message() + "; remove " + target.string() + " if it exists and run again");
  }
  say(options, "CIFAR-10 is ready in " + target.string());
#endif
}

}  // namespace dtbench::data
