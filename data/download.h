#pragma once
// CIFAR-10 download (`--download`): fetch cifar-10-binary.tar.gz, check its MD5, extract it into
// the data directory (docs/reference.md, "CIFAR-10"). libcurl fetches, libarchive extracts; a build
// without them (DTBENCH_WITH_DOWNLOAD=OFF, or libcurl/libarchive missing) says so and what to do.
//
// Contract: ensureCifar10(dataDir, options) leaves dataDir/cifar-10-batches-bin/ complete (the
// seven files of the official layout, the six .bin batches each exactly kCifar10FileBytes) or
// throws DataError; it never leaves anything that looks complete but is not:
//   1. dataDir/cifar-10-batches-bin already complete: nothing is fetched. One that exists but is
//      not complete (a file missing, or a batch of the wrong size) is an error naming the file
//      (and its size against the official one): nothing in it is trusted or overwritten.
//   2. The archive is written to dataDir/cifar-10-binary.tar.gz.part-<unique> and its MD5 checked;
//      a mismatch removes it and is an error that names the URL and both sums. A verified archive
//      is renamed to dataDir/cifar-10-binary.tar.gz and kept (a later run reuses it after checking
//      its MD5 again; one with the wrong MD5 is removed and fetched anew).
//   3. The archive is extracted into dataDir/.cifar-10-extract-<unique>/, only regular files and
//      folders, never outside it (no absolute paths, no "..", no links). Every write is checked
//      (a full disk is an error naming the file and the cause, never a zero-filled file) and
//      every file is synced and must hold the bytes its archive header announces. The extracted
//      cifar-10-batches-bin/ must then be complete as in 1, and only then is it renamed into
//      place in one step.
// Any failure (unreachable URL: curl's message; HTTP error; unwritable or full dataDir; corrupt or
// foreign archive) removes the temporary files and says what to do. So does options.cancelled
// returning true (DownloadInterrupted): it is polled while fetching, at least once a second even
// when the server sends nothing, around the MD5 check and between blocks while extracting. The
// readers in cifar10.h check the contents.

#include <functional>
#include <ostream>
#include <string>

#include "data/dataset.h"
#include "run/data_defaults.h"

namespace dtbench::data {

using run::kCifar10Md5;  // the official archive (run/data_defaults.h: --download-url's and --download-md5's defaults)
using run::kCifar10Url;
inline constexpr const char* kCifar10Archive = "cifar-10-binary.tar.gz";

struct DownloadOptions {
  std::string url = kCifar10Url;  // --download-url: a mirror of the same archive
  std::string md5 = kCifar10Md5;  // --download-md5: 32 hex digits
  std::ostream* log = nullptr;    // one line per stage when set
  // When set and true, stop: the trainer passes its SIGINT/SIGTERM flag (trainer/stop_signal.h).
  std::function<bool()> cancelled;
};

// ensureCifar10 stopped because options.cancelled said so; nothing partial was left behind.
class DownloadInterrupted : public DataError {
 public:
  using DataError::DataError;
};

// True when this build can download (DTBENCH_HAVE_DOWNLOAD).
bool downloadSupported();

// See the contract above. Throws DataError.
void ensureCifar10(const std::string& dataDir, const DownloadOptions& options);

}  // namespace dtbench::data
