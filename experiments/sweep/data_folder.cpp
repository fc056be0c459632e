#include "experiments/sweep/data_folder.h"

#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <system_error>

#include "common/usage_error.h"
#include "run/data_defaults.h"
#include "run/settings.h"

namespace dtbench::sweep {
namespace fs = std::filesystem;
namespace {

using common::UsageError;

bool isFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// "--data-dir DIR", saying so when DIR is only the dataset's default.
std::string folderText(const run::DataConfig& data) {
  return "--data-dir " + data.dir +
         (data.dir == run::defaultDataDir(data.dataset)
              ? std::string(" (dtbench train's default for --dataset ") + run::datasetNames().name(data.dataset) + ")"
              : "");
}

// The first of CIFAR-10's six batches missing from `dir`, where data::loadCifar10 looks: its
// cifar-10-batches-bin/ when that is a folder, else `dir` itself when it holds data_batch_1.bin; ""
// when none is missing.
std::string missingCifar10File(const fs::path& dir) {
  std::error_code error;
  fs::path folder = dir / "cifar-10-batches-bin";
  if (!fs::is_directory(folder, error)) {
    if (!fs::exists(dir / "data_batch_1.bin", error)) return (folder / "data_batch_1.bin").string();
    folder = dir;
  }
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                           "data_batch_5.bin", "test_batch.bin"})
    if (!fs::exists(folder / name, error)) return (folder / name).string();
  return "";
}

// The first of Fashion-MNIST's four IDX files missing from `dir` (each NAME.gz or NAME, as
// data::loadFashionMnist's findFile takes them), as "DIR/NAME[.gz]"; "" when none is missing.
std::string missingFashionMnistFile(const fs::path& dir) {
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"})
    if (!isFile(dir / (std::string(name) + ".gz")) && !isFile(dir / name)) return (dir / name).string() + "[.gz]";
  return "";
}

// The folder a download into `dir` writes in first: `dir`, else the nearest folder above it that
// exists (data::ensureCifar10 creates the rest).
fs::path existingFolderOf(const fs::path& dir) {
  std::error_code error;
  fs::path folder = dir;
  while (!folder.empty() && !fs::exists(folder, error) && folder.has_parent_path() && folder != folder.parent_path())
    folder = folder.parent_path();
  if (folder.empty() || !fs::exists(folder, error)) folder = ".";
  return folder;
}

}  // namespace

void checkDataFolder(const run::DataConfig& data) {
  if (data.dataset == run::DatasetKind::kSynthetic) return;
  const fs::path dir(data.dir);
  if (data.dataset == run::DatasetKind::kFashionMnist) {
    const std::string missing = missingFashionMnistFile(dir);
    if (missing.empty()) return;
    throw UsageError(folderText(data) + " holds no Fashion-MNIST: " + missing + " is missing; install Debian's "
                     "dataset-fashion-mnist (apt-get install dataset-fashion-mnist, files in " +
                     run::kFashionMnistDefaultDir + ") or put the four IDX files of "
                     "https://github.com/zalandoresearch/fashion-mnist into " + data.dir +
                     ", then run the sweep again (nothing was run)");
  }
  const std::string missing = missingCifar10File(dir);
  if (missing.empty()) return;
  if (data.download) {
    const fs::path folder = existingFolderOf(dir);
    std::error_code error;
    if (fs::is_directory(folder, error) && access(folder.c_str(), W_OK | X_OK) == 0) return;
    throw UsageError("--download fetches CIFAR-10 into " + folderText(data) + ", but " + folder.string() +
                     " cannot be written (" + (fs::is_directory(folder, error) ? "no permission" : "not a folder") +
                     "); give a --data-dir you can write, or fetch it once where you can (nothing was run)");
  }
  throw UsageError(folderText(data) + " holds no complete CIFAR-10: " + missing + " is missing; fetch it once with "
                   "`dtbench train --dataset cifar10 --download --data-dir " + data.dir +
                   " --model lenet --epochs 1 --max-steps 1 --no-eval`, or add --download after '--' (nothing was run)");
}

}  // namespace dtbench::sweep
