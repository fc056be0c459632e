#include "trainer/checkpoint_files.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "trainer/run_directory.h"

namespace dtbench::trainer {
namespace fs = std::filesystem;

namespace {

constexpr const char* kStateFile = "state.json";

fs::path partialDirectory(const std::string& runDir) { return fs::path(runDir) / "checkpoint.partial"; }
fs::path oldDirectory(const std::string& runDir) { return fs::path(runDir) / "checkpoint.old"; }

// The complete checkpoint to load: checkpoint/, else checkpoint.old/ (see the contract in checkpoint_files.h).
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

std::string toBytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream out(std::ios::out | std::ios::binary);
  archive.save_to(out);
  return std::move(out).str();
}

torch::serialize::InputArchive fromBytes(const std::string& bytes, torch::Device device) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size(), device);
  return archive;
}

torch::Device deviceOf(const torch::nn::Module& model) {
  for (const auto& parameter : model.parameters()) return parameter.device();
  for (const auto& buffer : model.buffers()) return buffer.device();
  return torch::kCPU;
}

// Module::load with copy_ instead of set_, so parameters and buffers keep their storage. Reads
// what Module::save writes: own parameters and buffers, then one sub-archive per serializable child.
void loadInPlace(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& prefix) {
  torch::NoGradGuard noGrad;
  auto copyInto = [&](const std::string& key, torch::Tensor& target, bool isBuffer) {
    torch::Tensor saved;
    archive.read(key, saved, isBuffer);
    TORCH_CHECK(saved.sizes() == target.sizes(), "'", prefix, key, "' was saved with shape ", saved.sizes(),
                " but the model has ", target.sizes());
    target.copy_(saved);
  };
  for (auto& parameter : module.named_parameters(/*recurse=*/false)) {
    if (parameter.value().defined()) copyInto(parameter.key(), parameter.value(), /*isBuffer=*/false);
  }
  for (auto& buffer : module.named_buffers(/*recurse=*/false)) {
    if (buffer.value().defined()) copyInto(buffer.key(), buffer.value(), /*isBuffer=*/true);
  }
  for (const auto& child : module.named_children()) {
    if (!child.value()->is_serializable()) continue;
    torch::serialize::InputArchive childArchive;
    archive.read(child.key(), childArchive);
    loadInPlace(*child.value(), childArchive, prefix + child.key() + ".");
  }
}

std::runtime_error cannotLoad(const std::string& source, const c10::Error& error) {
  return std::runtime_error("cannot load the model and optimizer from " + source + ": " +
                            error.what_without_backtrace() +
                            "; resume with the same --model, --optimizer and options as the run that saved it");
}

std::runtime_error unreadableArchive(const std::string& source, const std::string& bytes, const std::string& why) {
  return std::runtime_error(source + " is truncated or unreadable (" + std::to_string(bytes.size()) + " bytes; " + why +
                            "): the checkpoint is damaged; restore the file, or start a new run with a new --out");
}

// The archive's "model" and "optimizer" parts; std::runtime_error saying the bytes are damaged when
// they are not an archive of serializeTrainingState (empty, cut short, overwritten).
struct TrainingArchive {
  torch::serialize::InputArchive model;
  torch::serialize::InputArchive optimizer;
};

TrainingArchive openTrainingArchive(const std::string& bytes, torch::Device device, const std::string& source) {
  if (bytes.empty()) throw unreadableArchive(source, bytes, "the file is empty");
  TrainingArchive parts;
  try {
    torch::serialize::InputArchive archive = fromBytes(bytes, device);
    archive.read("model", parts.model);
    archive.read("optimizer", parts.optimizer);
  } catch (const c10::Error& e) {
    std::string why = e.what_without_backtrace();
    why = why.substr(0, why.find('\n'));
    throw unreadableArchive(source, bytes, why);
  }
  return parts;
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

std::string serializeTrainingState(torch::nn::Module& model, torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive modelArchive(archive.compilation_unit());
  model.save(modelArchive);
  archive.write("model", modelArchive);
  torch::serialize::OutputArchive optimizerArchive(archive.compilation_unit());
  optimizer.save(optimizerArchive);
  archive.write("optimizer", optimizerArchive);
  return toBytes(archive);
}

void deserializeTrainingState(const std::string& bytes, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                              const std::string& source) {
  TrainingArchive archive = openTrainingArchive(bytes, deviceOf(model), source);
  try {
    loadInPlace(model, archive.model, "");
    optimizer.load(archive.optimizer);
  } catch (const c10::Error& e) {
    throw cannotLoad(source, e);
  }
}

void checkTrainingStateReadable(const std::string& bytes, const std::string& source) {
  openTrainingArchive(bytes, torch::kCPU, source);
}

namespace {

// One generator in the encoded RNG state: "cpu" or "cudaN".
struct RngField {
  std::string name;
  std::vector<uint8_t> bytes;
};

std::string toHex(const torch::Tensor& state) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto bytes = state.contiguous();
  const uint8_t* data = bytes.data_ptr<uint8_t>();
  std::string out;
  out.reserve(2 * bytes.numel());
  for (int64_t i = 0; i < bytes.numel(); ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::invalid_argument badRngState(const std::string& what) {
  return std::invalid_argument("malformed RNG state: " + what + "; it must come from captureRngState");
}

std::vector<RngField> parseRngState(const std::string& encoded) {
  std::vector<RngField> fields;
  size_t begin = 0;
  while (begin <= encoded.size()) {
    const size_t end = std::min(encoded.find(';', begin), encoded.size());
    const std::string field = encoded.substr(begin, end - begin);
    const size_t equals = field.find('=');
    if (equals == std::string::npos) throw badRngState("field '" + field.substr(0, 16) + "' has no '='");
    RngField parsed{field.substr(0, equals), {}};
    const bool cuda = parsed.name.size() > 4 && parsed.name.size() <= 7 && parsed.name.compare(0, 4, "cuda") == 0 &&
                      parsed.name.find_first_not_of("0123456789", 4) == std::string::npos;
    if (parsed.name != "cpu" && !cuda) throw badRngState("unknown generator '" + parsed.name + "'");
    for (const RngField& seen : fields) {
      if (seen.name == parsed.name) throw badRngState("generator '" + parsed.name + "' appears twice");
    }
    const size_t digits = field.size() - equals - 1;
    if (digits == 0 || digits % 2 != 0) throw badRngState("'" + parsed.name + "' needs an even number of hex digits");
    for (size_t i = equals + 1; i < field.size(); i += 2) {
      const int high = hexDigit(field[i]);
      const int low = hexDigit(field[i + 1]);
      if (high < 0 || low < 0) throw badRngState("'" + parsed.name + "' holds a character that is not a hex digit");
      parsed.bytes.push_back(static_cast<uint8_t>(high << 4 | low));
    }
    fields.push_back(std::move(parsed));
    begin = end + 1;
  }
  if (fields.empty() || fields.front().name != "cpu") throw badRngState("the first field must be 'cpu'");
  return fields;
}

}  // namespace

std::string captureRngState() {
  std::vector<std::pair<std::string, at::Generator>> generators = {
      {"cpu", at::globalContext().defaultGenerator(at::kCPU)}};
  if (torch::cuda::is_available()) {
    const auto devices = static_cast<int>(torch::cuda::device_count());
    for (int i = 0; i < devices; ++i) {
      generators.emplace_back("cuda" + std::to_string(i),
                              at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<int8_t>(i))));
    }
  }
  std::string out;
  for (auto& [name, generator] : generators) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    if (!out.empty()) out += ';';
    out += name + "=" + toHex(generator.get_state());
  }
  return out;
}

namespace {

// The generators `encoded` sets and their new states; throws std::invalid_argument (changing nothing)
// when it is malformed or does not fit this LibTorch's generators.
std::vector<std::pair<at::Generator, torch::Tensor>> rngUpdates(const std::string& encoded) {
  const std::vector<RngField> fields = parseRngState(encoded);
  const int cudaDevices = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  std::vector<std::pair<at::Generator, torch::Tensor>> updates;
  for (const RngField& field : fields) {
    at::Generator generator;
    if (field.name == "cpu") {
      generator = at::globalContext().defaultGenerator(at::kCPU);
    } else {
      const int device = std::stoi(field.name.substr(4));
      if (device >= cudaDevices) continue;
      generator = at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<int8_t>(device)));
    }
    std::lock_guard<std::mutex> lock(generator.mutex());
    const int64_t expected = generator.get_state().numel();
    if (static_cast<int64_t>(field.bytes.size()) != expected) {
      throw badRngState("'" + field.name + "' holds " + std::to_string(field.bytes.size()) + " bytes, this " +
                        "LibTorch's generator has " + std::to_string(expected));
    }
    torch::Tensor state = torch::empty({expected}, torch::kUInt8);
    std::copy(field.bytes.begin(), field.bytes.end(), state.data_ptr<uint8_t>());
    updates.emplace_back(generator, std::move(state));
  }
  return updates;
}

}  // namespace

void checkRngState(const std::string& encoded) { rngUpdates(encoded); }

void restoreRngState(const std::string& encoded) {
  for (auto& [generator, state] : rngUpdates(encoded)) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  }
}

}  // namespace dtbench::trainer
