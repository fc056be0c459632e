#include "experiments/capture/pcap_recorder.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <stdexcept>

#include <pcap/pcap.h>
#include <poll.h>

#include "common/clock.h"
#include "common/file_lock.h"
#include "experiments/capture/interface_addresses.h"

namespace dtbench::capture {
namespace {

constexpr std::chrono::seconds kDrainLimit{2};

struct Live {
  std::string name;
  pcap_t* pcap = nullptr;
  pcap_dumper_t* dumper = nullptr;
  int64_t written = 0;
  double last_s = 0;
  InterfaceCapture info;

  ~Live() {
    if (dumper != nullptr) pcap_dump_close(dumper);
    if (pcap != nullptr) pcap_close(pcap);
  }
};

void dumpOne(u_char* user, const pcap_pkthdr* header, const u_char* bytes) {
  Live& live = *reinterpret_cast<Live*>(user);
  pcap_dump(reinterpret_cast<u_char*>(live.dumper), header, bytes);
  ++live.written;
  live.last_s = static_cast<double>(header->ts.tv_sec) + static_cast<double>(header->ts.tv_usec) * 1e-6;
}

std::string activationProblem(pcap_t* pcap, int status, const std::string& interface) {
  const std::string detail = pcap_geterr(pcap);
  switch (status) {
    case PCAP_ERROR_NO_SUCH_DEVICE:
      return "interface " + interface + " does not exist in this network namespace (" + detail + ")";
    case PCAP_ERROR_PERM_DENIED:
      return "no permission to capture on " + interface + ": run as root (or with CAP_NET_RAW) (" + detail + ")";
    default:
      return "cannot capture on " + interface + ": " + pcap_statustostr(status) + (detail.empty() ? "" : " (" + detail + ")");
  }
}

void check(int status, pcap_t* pcap, const std::string& interface, const char* what) {
  if (status != 0)
    throw std::runtime_error("cannot capture on " + interface + ": " + what + " failed (" + pcap_geterr(pcap) + ")");
}

void open(Live& live, const RecordOptions& o) {
  char error[PCAP_ERRBUF_SIZE] = {};
  live.pcap = pcap_create(live.name.c_str(), error);
  if (live.pcap == nullptr) throw std::runtime_error("cannot capture on " + live.name + ": " + error);
  check(pcap_set_snaplen(live.pcap, o.snaplen), live.pcap, live.name, "pcap_set_snaplen");
  check(pcap_set_immediate_mode(live.pcap, 1), live.pcap, live.name, "pcap_set_immediate_mode");
  check(pcap_set_buffer_size(live.pcap, o.bufferBytes), live.pcap, live.name, "pcap_set_buffer_size");
  check(pcap_set_promisc(live.pcap, 0), live.pcap, live.name, "pcap_set_promisc");
  pcap_set_tstamp_precision(live.pcap, PCAP_TSTAMP_PRECISION_MICRO);
  const int status = pcap_activate(live.pcap);
  if (status < 0) throw std::runtime_error(activationProblem(live.pcap, status, live.name));
  if (pcap_setnonblock(live.pcap, 1, error) != 0)
    throw std::runtime_error("cannot capture on " + live.name + ": pcap_setnonblock failed (" + error + ")");
  if (pcap_get_selectable_fd(live.pcap) < 0)
    throw std::runtime_error("cannot capture on " + live.name + ": it has no descriptor to poll");
}

// Creates the interface's pcap file (after every interface is open, so a failure leaves no file).
void openFile(Live& live, const RecordOptions& o) {
  const std::string path = (std::filesystem::path(o.outputDir) / pcapFileName(o.node, live.name)).string();
  live.dumper = pcap_dump_open(live.pcap, path.c_str());
  if (live.dumper == nullptr) throw std::runtime_error("cannot write " + path + " (" + pcap_geterr(live.pcap) + ")");
  live.info.name = live.name;
  live.info.pcap = pcapFileName(o.node, live.name);
  const char* linkType = pcap_datalink_val_to_name(pcap_datalink(live.pcap));
  live.info.linkType = linkType != nullptr ? linkType : std::to_string(pcap_datalink(live.pcap));
}

// Reads what is buffered now; returns the packets read (0: none left), throws on an error.
int readBuffered(Live& live) {
  const int n = pcap_dispatch(live.pcap, -1, dumpOne, reinterpret_cast<u_char*>(&live));
  if (n == PCAP_ERROR) throw std::runtime_error("capture on " + live.name + " failed: " + pcap_geterr(live.pcap));
  return n < 0 ? 0 : n;
}

}  // namespace

std::string pcapFileName(const std::string& node, const std::string& interface) {
  return node + "." + interface + ".pcap";
}

std::string readyFileName(const std::string& node) { return node + ".ready"; }

std::string recordLockFileName(const std::string& node) { return "." + node + ".record.lock"; }

namespace {

common::FileLock lockRecording(const RecordOptions& o) {
  try {
    return common::FileLock((std::filesystem::path(o.outputDir) / recordLockFileName(o.node)).string());
  } catch (const common::FileLockHeld& held) {
    throw std::runtime_error("node " + o.node + " is already being recorded into " + o.outputDir + " (" +
                             held.owner() + "); stop that recorder or give another --node or --output");
  }
}

}  // namespace

CaptureFile recordInterfaces(const RecordOptions& o, const std::atomic<bool>& stop,
                             const std::function<void()>& onReady, std::ostream* warnings) {
  if (o.interfaces.empty()) throw std::runtime_error("capture: no interface to capture");
  for (size_t k = 0; k < o.interfaces.size(); ++k)
    if (std::find(o.interfaces.begin(), o.interfaces.begin() + k, o.interfaces[k]) != o.interfaces.begin() + k)
      throw std::runtime_error("capture: interface " + o.interfaces[k] + " is named twice");
  std::error_code error;
  std::filesystem::create_directories(o.outputDir, error);
  if (error) throw std::runtime_error("cannot create the capture directory " + o.outputDir + " (" + error.message() + ")");
  const common::FileLock lock = lockRecording(o);
  std::vector<std::unique_ptr<Live>> lives;
  for (const std::string& name : o.interfaces) {
    lives.push_back(std::make_unique<Live>());
    lives.back()->name = name;
    open(*lives.back(), o);
  }
  try {
    for (auto& live : lives) openFile(*live, o);
  } catch (const std::exception&) {
    for (auto& live : lives) {
      if (live->dumper == nullptr) continue;
      pcap_dump_close(live->dumper);
      live->dumper = nullptr;
      std::filesystem::remove(std::filesystem::path(o.outputDir) / pcapFileName(o.node, live->name), error);
    }
    throw;
  }
  CaptureFile file;
  file.node = o.node;
  file.snaplen = o.snaplen;
  for (auto& live : lives) {
    live->info.addresses = interfaceAddresses(live->name);
    live->info.countersBefore = readInterfaceCounters(live->name);
  }
  file.started_s = common::unixSeconds();
  {
    const std::string ready = (std::filesystem::path(o.outputDir) / readyFileName(o.node)).string();
    std::ofstream out(ready);
    out << "ready\n";
    if (!out) throw std::runtime_error("cannot write " + ready);
  }
  if (onReady) onReady();

  std::vector<pollfd> fds;
  for (auto& live : lives) fds.push_back({pcap_get_selectable_fd(live->pcap), POLLIN, 0});
  const auto begin = std::chrono::steady_clock::now();
  while (!stop.load()) {
    if (o.duration_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() >= o.duration_s)
      break;
    for (pollfd& f : fds) f.revents = 0;
    poll(fds.data(), fds.size(), 100);  // EINTR (a signal) just looks at `stop` again
    for (size_t k = 0; k < lives.size(); ++k)
      if (fds[k].revents != 0) readBuffered(*lives[k]);
  }

  for (auto& live : lives) live->info.countersAfter = readInterfaceCounters(live->name);
  // Under steady traffic the buffer never empties: what arrives after counters_after is outside the
  // window anyway, so the drain stops after kDrainLimit.
  const auto drainEnd = std::chrono::steady_clock::now() + kDrainLimit;
  for (auto& live : lives)
    while (readBuffered(*live) > 0 && std::chrono::steady_clock::now() < drainEnd) {
    }
  for (auto& live : lives) {
    pcap_stat stats{};
    if (pcap_stats(live->pcap, &stats) == 0) {
      live->info.pcapReceived = stats.ps_recv;
      live->info.pcapDropped = stats.ps_drop;
      live->info.interfaceDropped = stats.ps_ifdrop;
    }
    live->info.packetsCaptured = live->written;
    pcap_dump_flush(live->dumper);
    pcap_dump_close(live->dumper);
    live->dumper = nullptr;
    file.stopped_s = std::max(file.stopped_s, live->last_s);
    if (live->info.pcapDropped > 0 && warnings != nullptr)
      *warnings << "capture: WARNING " << o.node << " " << live->name << ": pcap dropped " << live->info.pcapDropped
                << " packets; this capture is incomplete\n";
    file.interfaces.push_back(live->info);
  }
  if (file.stopped_s == 0) file.stopped_s = common::unixSeconds();
  writeCaptureFile((std::filesystem::path(o.outputDir) / captureFileName(o.node)).string(), file);
  return file;
}

}  // namespace dtbench::capture
