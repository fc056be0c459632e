#include "trainer/record/device_facts.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "comm/allgather_values.h"
#include "comm/failure/peer_table.h"
#include "dtbench/build_config.h"
#include "trainer/thread_share.h"

namespace dtbench::trainer {
namespace {

std::string fileText(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trimmed(std::string text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const size_t last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

}  // namespace

std::string cpuModelName(const std::string& cpuinfo) {
  std::string fallback;
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    const std::string value = trimmed(line.substr(colon + 1));
    if (key == "model name" && !value.empty()) return value;
    if (key == "Model" && fallback.empty()) fallback = value;
  }
  return fallback;
}

#if !DTBENCH_TORCH_HAS_CUDA
void describeCudaDevice(int, run::DeviceFacts&) {
  throw std::runtime_error("this build's LibTorch has no CUDA: no GPU to describe");
}
#endif

run::DeviceFacts describeDevice(c10::Device device) {
  run::DeviceFacts facts;
  facts.type = device.is_cuda() ? "cuda" : "cpu";
  facts.host = comm::thisHostName();
  facts.bootId = trimmed(fileText("/proc/sys/kernel/random/boot_id"));
  facts.cores = availableCores();
  facts.threads = at::get_num_threads();
  if (device.is_cuda()) {
    describeCudaDevice(device.has_index() ? device.index() : 0, facts);
  } else {
    facts.model = cpuModelName(fileText("/proc/cpuinfo"));
    if (facts.model.empty()) facts.model = "unknown";
  }
  return facts;
}

std::vector<run::DeviceFacts> describeDevices(c10::Device device, World* world) {
  const run::DeviceFacts mine = describeDevice(device);
  if (!world) return {mine};
  std::vector<run::DeviceFacts> all;
  for (const std::string& text : comm::allgatherBytes(*world->communicator, run::deviceJson(mine).dump()))
    all.push_back(run::readDeviceJson(nlohmann::json::parse(text)));
  return all;
}

}  // namespace dtbench::trainer
