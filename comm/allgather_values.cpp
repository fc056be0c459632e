#include "comm/allgather_values.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "comm/work.h"

namespace dtbench::comm {
namespace {

constexpr int kLimbs = 3;
constexpr int kLimbBits = 21;  // float32 holds integers up to 2^24 exactly
constexpr int64_t kLimbMask = (int64_t{1} << kLimbBits) - 1;

}  // namespace

std::vector<std::vector<int64_t>> allgatherInt64(Communicator& communicator, const std::vector<int64_t>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  at::Tensor input = at::empty({n * kLimbs}, at::kFloat);
  auto* in = input.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    if (values[i] < 0) throw std::invalid_argument("allgatherInt64 takes non-negative values");
    for (int l = 0; l < kLimbs; ++l) in[i * kLimbs + l] = static_cast<float>((values[i] >> (l * kLimbBits)) & kLimbMask);
  }
  at::Tensor output = at::empty({n * kLimbs * communicator.size()}, at::kFloat);
  communicator.allgather(output, input)->wait();
  const auto* out = output.data_ptr<float>();
  std::vector<std::vector<int64_t>> result(communicator.size(), std::vector<int64_t>(n, 0));
  for (int r = 0; r < communicator.size(); ++r)
    for (int64_t i = 0; i < n; ++i)
      for (int l = 0; l < kLimbs; ++l)
        result[r][i] |= static_cast<int64_t>(out[(r * n + i) * kLimbs + l]) << (l * kLimbBits);
  return result;
}

std::vector<std::vector<int64_t>> allgatherInt64Ragged(Communicator& communicator,
                                                       const std::vector<int64_t>& values) {
  const auto lengths = allgatherInt64(communicator, {static_cast<int64_t>(values.size())});
  int64_t longest = 0;
  for (const auto& l : lengths) longest = std::max(longest, l[0]);
  std::vector<int64_t> padded = values;
  padded.resize(static_cast<size_t>(longest), 0);
  auto all = allgatherInt64(communicator, padded);
  for (int r = 0; r < communicator.size(); ++r) all[r].resize(static_cast<size_t>(lengths[r][0]));
  return all;
}

namespace {

// `bytes` zero-padded into `elements` float32 slots (the bit patterns are only moved, never read as floats).
at::Tensor packBytes(const std::string& bytes, int64_t elements) {
  at::Tensor packed = at::zeros({elements}, at::kFloat);
  if (!bytes.empty()) std::memcpy(packed.data_ptr<float>(), bytes.data(), bytes.size());
  return packed;
}

int64_t elementsFor(int64_t bytes) { return (bytes + 3) / 4; }

}  // namespace

std::vector<std::string> allgatherBytes(Communicator& communicator, const std::string& bytes) {
  const auto lengths = allgatherInt64(communicator, {static_cast<int64_t>(bytes.size())});
  int64_t longest = 0;
  for (const auto& l : lengths) longest = std::max(longest, l[0]);
  const int64_t slots = std::max<int64_t>(1, elementsFor(longest));
  at::Tensor output = at::empty({slots * communicator.size()}, at::kFloat);
  communicator.allgather(output, packBytes(bytes, slots))->wait();
  const char* out = reinterpret_cast<const char*>(output.data_ptr<float>());
  std::vector<std::string> result;
  for (int r = 0; r < communicator.size(); ++r)
    result.emplace_back(out + static_cast<size_t>(r * slots) * 4, static_cast<size_t>(lengths[r][0]));
  return result;
}

std::string broadcastBytes(Communicator& communicator, const std::string& bytes, int root) {
  at::Tensor length = at::zeros({kLimbs}, at::kFloat);
  if (communicator.rank() == root) {
    const auto n = static_cast<int64_t>(bytes.size());
    for (int l = 0; l < kLimbs; ++l) length[l] = static_cast<float>((n >> (l * kLimbBits)) & kLimbMask);
  }
  communicator.broadcast(length, root)->wait();
  int64_t n = 0;
  for (int l = 0; l < kLimbs; ++l) n |= static_cast<int64_t>(length[l].item<float>()) << (l * kLimbBits);
  at::Tensor packed = communicator.rank() == root ? packBytes(bytes, std::max<int64_t>(1, elementsFor(n)))
                                                  : at::zeros({std::max<int64_t>(1, elementsFor(n))}, at::kFloat);
  communicator.broadcast(packed, root)->wait();
  return std::string(reinterpret_cast<const char*>(packed.data_ptr<float>()), static_cast<size_t>(n));
}

std::vector<std::string> allgatherStrings(Communicator& communicator, const std::string& value) {
  constexpr int64_t kMax = 256;
  if (static_cast<int64_t>(value.size()) >= kMax) throw std::invalid_argument("allgatherStrings: string too long");
  at::Tensor input = at::zeros({kMax}, at::kFloat);
  float* in = input.data_ptr<float>();
  for (size_t i = 0; i < value.size(); ++i) in[i] = static_cast<float>(static_cast<unsigned char>(value[i]));
  at::Tensor output = at::empty({kMax * communicator.size()}, at::kFloat);
  communicator.allgather(output, input)->wait();
  std::vector<std::string> result;
  const auto* out = output.data_ptr<float>();
  for (int r = 0; r < communicator.size(); ++r) {
    std::string text;
    for (int64_t i = 0; i < kMax && out[r * kMax + i] != 0.0f; ++i) text += static_cast<char>(out[r * kMax + i]);
    result.push_back(text);
  }
  return result;
}

std::vector<double> allgatherDoubles(Communicator& communicator, double value) {
  std::string mine(sizeof value, '\0');
  std::memcpy(mine.data(), &value, sizeof value);
  std::vector<double> values;
  for (const std::string& bytes : allgatherBytes(communicator, mine)) {
    double theirs = 0;
    std::memcpy(&theirs, bytes.data(), std::min(bytes.size(), sizeof theirs));
    values.push_back(theirs);
  }
  return values;
}

}  // namespace dtbench::comm
