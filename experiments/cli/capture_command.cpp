#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cluster_file.h"
#include "common/file_lock.h"
#include "common/usage_error.h"
#include "dtbench/build_config.h"
#include "experiments/cli/capture_options.h"
#include "experiments/cli/commands.h"
#if DTBENCH_HAVE_CAPTURE
#include "experiments/capture/pcap_recorder.h"
#include "experiments/capture/reconciliation.h"
#include "experiments/capture/wire_capture.h"
#include "experiments/capture/wire_tables.h"
#endif

namespace dtbench::experiments {
#if DTBENCH_HAVE_CAPTURE
namespace {

namespace fs = std::filesystem;

// Set by SIGINT and SIGTERM while `capture record` runs; the recorder looks at it between polls.
std::atomic<bool> stopRequested{false};

void requestStop(int) { stopRequested.store(true); }

// Installs requestStop for SIGINT and SIGTERM (without SA_RESTART, so that poll returns at once),
// and puts the previous handlers back when it goes.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = requestStop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previousInt_);
    sigaction(SIGTERM, &action, &previousTerm_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &previousInt_, nullptr);
    sigaction(SIGTERM, &previousTerm_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction previousInt_ {}, previousTerm_ {};
};

int recordCommand(const CaptureOptions& o) {
  capture::RecordOptions options;
  options.node = o.node;
  options.interfaces = o.interfaces;
  options.outputDir = o.output;
  options.snaplen = o.snaplen;
  options.duration_s = o.duration_s;
  stopRequested.store(false);
  const StopSignals signals;
  const capture::CaptureFile file = capture::recordInterfaces(
      options, stopRequested,
      [] {
        std::printf("ready\n");
        std::fflush(stdout);
      },
      &std::cerr);
  for (const capture::InterfaceCapture& i : file.interfaces)
    std::fprintf(stderr, "capture: %s %s: %lld packets written to %s, pcap dropped %lld\n", file.node.c_str(),
                 i.name.c_str(), static_cast<long long>(i.packetsCaptured), i.pcap.c_str(),
                 static_cast<long long>(i.pcapDropped));
  return 0;
}

std::string clusterFileFromEnvironment() {
  const char* value = std::getenv(common::kClusterVariable);
  if (value == nullptr || *value == '\0') return "";
  std::error_code error;
  if (!fs::is_regular_file(value, error))
    throw common::UsageError(std::string(common::kClusterVariable) + "=" + value +
                             " is no file (the emulated cluster's cluster.json; unset it off the cluster)");
  return value;
}

// One analysis of a capture directory at a time (it writes its tables there and deletes its pcaps),
// and none while a node still records into it. A directory where no lock file can be made (read
// only) is analyzed unlocked.
std::optional<common::FileLock> lockAnalysis(const std::string& directory) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".record.lock";
    if (name.size() > suffix.size() + 1 && name[0] == '.' &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        common::FileLock::isHeld(entry.path().string()))
      throw std::runtime_error("capture analyze: node " + name.substr(1, name.size() - suffix.size() - 1) +
                               " is still recording into " + directory + ": stop its recorder first");
  }
  try {
    return common::FileLock((fs::path(directory) / ".analyze.lock").string());
  } catch (const common::FileLockHeld& held) {
    throw std::runtime_error("capture analyze: " + directory + " is being analyzed by another dtbench (" +
                             held.owner() + "); wait for it to end");
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "capture analyze: WARNING %s: analyzing without a lock\n", e.what());
    return std::nullopt;
  }
}

int analyzeCommand(const CaptureOptions& o) {
  std::error_code error;
  if (fs::exists(o.directory, error) && !fs::is_directory(o.directory, error))
    throw common::UsageError("capture analyze: " + o.directory +
                             " is a file; name the capture directory (where record wrote <node>.capture.json)");
  if (!fs::is_directory(o.directory, error))
    throw common::UsageError("capture analyze: the capture directory " + o.directory + " does not exist");
  if (!o.messages.empty() && !fs::is_directory(o.messages, error))
    throw common::UsageError("capture analyze: --messages " + o.messages + " is no directory");
  const std::optional<common::FileLock> lock = lockAnalysis(o.directory);
  capture::WireCapture wire = capture::loadWireCapture(o.directory, clusterFileFromEnvironment());
  const std::string output = o.output.empty() ? o.directory : o.output;

  // The reconciliation: with --messages, the ranks' message log names every flow's ranks and class
  // (the flows' srcRank, dstRank and cls, which wire_flows.csv shows); so it comes before the tables,
  // which write reconciliation.csv with them.
  if (!o.messages.empty()) wire.reconciliation = capture::labelAndReconcile(wire.flows, o.messages);

  capture::writeWireTables(wire, output);
  for (const std::string& warning : wire.warnings) std::fprintf(stderr, "capture analyze: WARNING %s\n", warning.c_str());
  if (!wire.complete())
    std::fprintf(stderr, "capture analyze: WARNING the capture is incomplete (pcap dropped packets): every table "
                         "undercounts; see wire_summary.json\n");
  if (!o.keepPcap)
    for (const capture::CapturePoint& p : wire.points) fs::remove(p.pcapPath, error);
  std::fprintf(stderr, "capture analyze: %zu capture points, %zu packets counted, %zu flows, %zu retransmissions; "
               "tables in %s\n", wire.points.size(), wire.packets.size(), wire.flows.size(),
               wire.retransmissions.size(), output.c_str());
  return 0;
}

}  // namespace
#endif

int runCaptureCommand(const std::vector<std::string>& args) {
  const CaptureOptions o = parseCaptureOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
#if DTBENCH_HAVE_CAPTURE
  return o.action == CaptureAction::kRecord ? recordCommand(o) : analyzeCommand(o);
#else
  throw common::UsageError("this build has no capture (libpcap was not found when it was configured); rebuild with "
                           "libpcap-dev installed and -DDTBENCH_WITH_CAPTURE=ON");
#endif
}

}  // namespace dtbench::experiments
