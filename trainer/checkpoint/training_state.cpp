#include "trainer/checkpoint/training_state.h"

#include <sstream>
#include <stdexcept>
#include <utility>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

namespace dtbench::trainer {

namespace {

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

}  // namespace dtbench::trainer
