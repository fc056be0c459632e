#include "trainer/record/gemm_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "run/json_values.h"

namespace dtbench::trainer {
namespace {

std::string nowUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

run::GemmProbe measure() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const at::Tensor a = at::rand({kProbeSize, kProbeSize});
  const at::Tensor b = at::rand({kProbeSize, kProbeSize});
  at::Tensor c = at::mm(a, b);  // untimed: the first product allocates and warms the library
  const double flops = 2.0 * static_cast<double>(kProbeSize) * kProbeSize * kProbeSize;
  double best = 0;
  const auto timedStart = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - timedStart).count() < kProbeBudgetS) {
    const auto t0 = Clock::now();
    at::mm_out(c, a, b);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0) best = std::max(best, flops / s);
  }
  run::GemmProbe probe;
  probe.gflops = best / 1e9;
  probe.threads = at::get_num_threads();
  probe.size = kProbeSize;
  probe.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  probe.measured = nowUtc();
  return probe;
}

std::optional<run::GemmProbe> readCached(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    run::GemmProbe p;
    p.gflops = run::numberValue(j.at("gflops"));
    p.threads = run::wholeValue(j.at("threads"));
    p.size = run::wholeValue(j.at("size"));
    p.seconds = run::numberValue(j.at("seconds"));
    p.measured = run::textValue(j.at("measured"));
    if (!(p.gflops > 0) || p.threads != at::get_num_threads() || p.size != kProbeSize) return std::nullopt;
    return p;
  } catch (const std::exception&) {
    return std::nullopt;  // damaged: measured again and rewritten
  }
}

}  // namespace

std::optional<std::string> gemmProbeCacheDirectory() {
  std::string base;
  if (const char* d = std::getenv("DTBENCH_CACHE_DIR"); d && *d) {
    base = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    base = std::string(x) + "/dtbench";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    base = std::string(h) + "/.cache/dtbench";
  } else {
    return std::nullopt;
  }
  return base + "/gemm-probe";
}

run::GemmProbe probeGemm(const std::string& cacheDirectory, const std::string& bootId) {
  std::string path;
  if (!cacheDirectory.empty() && !bootId.empty()) {
    path = cacheDirectory + "/" + bootId + "-threads" + std::to_string(at::get_num_threads()) + "-size" +
           std::to_string(kProbeSize) + ".json";
    if (std::optional<run::GemmProbe> cached = readCached(path)) return *cached;
  }
  const run::GemmProbe probe = measure();
  if (!path.empty()) {
    std::error_code error;
    std::filesystem::create_directories(cacheDirectory, error);
    try {
      common::writeFileAtomically(path, [&](std::ostream& out) {
        out << nlohmann::json{{"gflops", probe.gflops},
                              {"threads", probe.threads},
                              {"size", probe.size},
                              {"seconds", probe.seconds},
                              {"measured", probe.measured}}
                   .dump(1)
            << "\n";
      });
    } catch (const std::exception&) {
      // A cache that cannot be written (read-only home, full disk) costs the next run another probe.
    }
  }
  return probe;
}

}  // namespace dtbench::trainer
