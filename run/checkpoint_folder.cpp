#include "run/checkpoint_folder.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "run/run_directory.h"

namespace dtbench::run {
namespace fs = std::filesystem;

namespace {

constexpr const char* kStateFile = "state.json";

fs::path partialDirectory(const std::string& runDir) { return fs::path(runDir) / "checkpoint.partial"; }
fs::path oldDirectory(const std::string& runDir) { return fs::path(runDir) / "checkpoint.old"; }

// The complete checkpoint to load: checkpoint/, else checkpoint.old/ (see the contract in checkpoint_folder.h).
std::optional<fs::path> completeCheckpoint(const std::string& runDir) {
  std::error_code ignored;
  for (const fs::path& dir : {fs::path(checkpointDirectory(runDir)), oldDirectory(runDir)}) {
    if (fs::is_regular_file(dir / kStateFile, ignored)) return dir;
  }
  return std::nullopt;
}

std::runtime_error noCheckpoint(const std::string& runDir) {
  return std::runtime_error("no complete checkpoint in " + checkpointDirectory(runDir) +
                            ": --resume needs the run directory of a run that stopped early (exit code 75); "
                            "start a new run without --resume otherwise");
}

void removeAll(const fs::path& dir) {
  std::error_code error;
  fs::remove_all(dir, error);
  if (error) throw std::runtime_error("cannot remove " + dir.string() + ": " + error.message());
}

void renameDirectory(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::rename(from, to, error);
  if (error) throw std::runtime_error("cannot rename " + from.string() + " to " + to.string() + ": " + error.message());
}

void writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::out | std::ios::binary | std::ios::trunc);
  errno = 0;
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) {
    throw std::runtime_error("cannot write " + path.string() + " (" + (errno ? std::strerror(errno) : "write failed") +
                             "): is the disk full or the directory gone?");
  }
}

// Writes the checkpoint's files into `partial`, state.json last.
void writePartial(const fs::path& partial, const std::map<std::string, std::string>& files,
                  const nlohmann::json& state) {
  std::error_code error;
  fs::create_directories(partial, error);
  if (error) {
    throw std::runtime_error("cannot create " + partial.string() + ": " + error.message() +
                             "; is the run directory writable?");
  }
  for (const auto& [name, bytes] : files) writeFile(partial / name, bytes);
  writeJsonAtomically((partial / kStateFile).string(), state);
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::in | std::ios::binary | std::ios::ate);
  std::string bytes;
  if (in) {
    bytes.resize(static_cast<size_t>(in.tellg()));
    in.seekg(0);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  if (!in) throw std::runtime_error("cannot read " + path.string() + "; the checkpoint is damaged, start a new run");
  return bytes;
}

void checkFileName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name == kStateFile || name.find('/') != std::string::npos) {
    throw std::invalid_argument("'" + name + "' cannot be a checkpoint file: use a plain file name other than " +
                                kStateFile);
  }
}

}  // namespace

std::string checkpointDirectory(const std::string& runDir) { return (fs::path(runDir) / "checkpoint").string(); }

bool hasCheckpoint(const std::string& runDir) { return completeCheckpoint(runDir).has_value(); }

void saveCheckpoint(const std::string& runDir, const std::map<std::string, std::string>& files,
                    const nlohmann::json& state) {
  for (const auto& file : files) checkFileName(file.first);
  const fs::path partial = partialDirectory(runDir);
  const fs::path current = checkpointDirectory(runDir);
  const fs::path old = oldDirectory(runDir);

  removeAll(partial);
  try {
    writePartial(partial, files, state);
  } catch (const std::exception& e) {
    // A full disk is the usual cause: the partial files go first, so that the space they took is
    // free again for summary.json's "failed"; the earlier checkpoint was never touched.
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    throw std::runtime_error(std::string(e.what()) + "; checkpoint not written (" +
                             (hasCheckpoint(runDir)
                                  ? "the previous one in " + checkpointDirectory(runDir) + " is intact"
                                  : "there is no earlier one") +
                             ")");
  }

  if (fs::exists(current)) {
    removeAll(old);  // left by a crash after the second rename: current is newer and complete
    renameDirectory(current, old);
  }
  try {
    renameDirectory(partial, current);
  } catch (const std::exception&) {
    std::error_code ignored;
    if (fs::exists(old, ignored)) fs::rename(old, current, ignored);  // the previous checkpoint back in place
    fs::remove_all(partial, ignored);
    throw;
  }
  removeAll(old);
}

LoadedCheckpoint loadCheckpoint(const std::string& runDir) {
  const auto dir = completeCheckpoint(runDir);
  if (!dir) throw noCheckpoint(runDir);
  LoadedCheckpoint loaded;
  loaded.directory = dir->string();
  const fs::path statePath = *dir / kStateFile;
  std::ifstream in(statePath);
  try {
    loaded.state = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("cannot read " + statePath.string() + ": " + e.what() +
                             "; the checkpoint is damaged, start a new run");
  }
  if (!loaded.state.is_object()) {
    throw std::runtime_error(statePath.string() + " holds " + std::string(loaded.state.type_name()) +
                             ", not an object; the checkpoint is damaged, start a new run");
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(*dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name != kStateFile && entry.is_regular_file()) loaded.files[name] = readFile(entry.path());
  }
  if (error) throw std::runtime_error("cannot list " + dir->string() + ": " + error.message());
  return loaded;
}

}  // namespace dtbench::run
