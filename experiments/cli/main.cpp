// dtbench: data-parallel training benchmarks. `dtbench SUBCOMMAND --help` for each subcommand.

#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "common/lists.h"
#include "common/usage_error.h"
#include "data/dataset.h"
#include "dtbench/build_config.h"
#include "experiments/cli/commands.h"
#include "trainer/record/environment.h"

namespace {

using dtbench::experiments::Subcommand;
using dtbench::experiments::subcommands;

std::string usage() {
  std::string text = "Usage: dtbench SUBCOMMAND [OPTIONS]\n\nSubcommands:\n";
  for (const Subcommand& s : subcommands()) {
    std::string summary = s.summary;
    for (size_t at = summary.find('\n'); at != std::string::npos; at = summary.find('\n', at + 1))
      summary.insert(at + 1, 13, ' ');
    char name[16];
    std::snprintf(name, sizeof name, "%-10s", s.name);
    text += "  " + std::string(name) + " " + summary + "\n";
  }
  return text +
         "\n`dtbench SUBCOMMAND --help` shows a subcommand's options. Exit codes: 0 success,\n"
         "1 failure (bad data, failed run), 2 usage error.\n";
}

// `dtbench --version`: this build, its LibTorch and what it sees (scripts read "gpus visible: N").
std::string versionText() {
  const nlohmann::json env = dtbench::trainer::describeEnvironment();
  const auto text = [&](const char* key) { return env.at(key).is_null() ? std::string("none") : env.at(key).get<std::string>(); };
  std::string build;
  for (const auto& [feature, on] : env.at("build").items())
    build += (build.empty() ? "" : ", ") + feature + (on.get<bool>() ? " yes" : " no");
  return "dtbench " + text("dtbench_version") + "\nlibtorch " + text("libtorch_version") + " (CUDA " +
         text("libtorch_cuda_version") + ", cuDNN " + text("cudnn_version") + ", NCCL " + text("nccl_version") +
         ")\nmpi " + text("mpi_version") + "\ngpus visible: " + std::to_string(env.at("gpus_visible").get<int>()) +
         "\nbuild: " + build + "\n";
}

int dispatch(const std::string& command, const std::vector<std::string>& args) {
  for (const Subcommand& s : subcommands())
    if (command == s.name) return s.run(args);
  if (command == "-h" || command == "--help" || command == "help") {
    std::printf("%s", usage().c_str());
    return 0;
  }
  if (command == "--version") {
    std::printf("%s", versionText().c_str());
    return 0;
  }
  std::vector<std::string> names;
  for (const Subcommand& s : subcommands()) names.emplace_back(s.name);
  throw dtbench::common::UsageError("unknown subcommand '" + command +
                                    "'; valid subcommands: " + dtbench::common::joinList(names));
}

}  // namespace

int main(int argc, char** argv) {
  // A rank that dies closes its sockets; Gloo's writes to them must fail with EPIPE, which the
  // communicator turns into an error naming the dead peer, instead of killing this rank silently.
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    std::fprintf(stderr, "%s", usage().c_str());
    return dtbench::common::kUsageErrorExitCode;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    return dispatch(argv[1], args);
  } catch (const dtbench::common::UsageError& e) {
    std::fprintf(stderr, "dtbench: usage error: %s\n", e.what());
    return dtbench::common::kUsageErrorExitCode;
  } catch (const dtbench::data::DataError& e) {
    std::fprintf(stderr, "dtbench: data error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "dtbench: error: out of memory: the command asked for more than this process may use (the "
                         "machine's memory, or ulimit -v); ask for less (a smaller world, fewer ranks per node, "
                         "smaller sizes)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtbench: error: %s\n", dtbench::trainer::errorMessage(e).c_str());
    return 1;
  }
}
