#include "trainer/checkpoint/rng_state.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/Context.h>
#include <torch/cuda.h>

namespace dtbench::trainer {

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
