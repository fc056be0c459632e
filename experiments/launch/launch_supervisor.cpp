#include "experiments/launch/launch_supervisor.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/oom_kills.h"
#include "experiments/launch/rank_end.h"

namespace dtbench::experiments {
namespace {

constexpr int kInterrupted = 75;  // EX_TEMPFAIL: dtbench train preempted, checkpoint written

using Clock = std::chrono::steady_clock;

struct Stream {
  int fd = -1;
  FILE* out = nullptr;
  std::string pending;  // a partial line
};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  int exitCode = 0;
  int signal = 0;                // the signal that killed it; 0 when it exited
  unsigned long long sent = 0;  // bit s: the launcher sent it signal s
  Stream streams[2];
};

int exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void emit(int rank, Stream& s, bool flushAll) {
  size_t start = 0;
  for (size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1)
    std::fprintf(s.out, "[%d] %.*s\n", rank, static_cast<int>(nl - start), s.pending.data() + start);
  s.pending.erase(0, start);
  if (flushAll && !s.pending.empty()) {
    std::fprintf(s.out, "[%d] %s\n", rank, s.pending.c_str());
    s.pending.clear();
  }
  std::fflush(s.out);
}

// Note [No rank outlives its launcher]: each rank asks the kernel for SIGKILL when its parent dies
// (PR_SET_PDEATHSIG), so a launcher killed with SIGKILL, which can forward nothing, takes its ranks
// with it instead of leaving them to run (a long benchmark: forever). SIGKILL rather than SIGTERM:
// with the launcher gone nobody is left to enforce a grace period on a rank that ignores SIGTERM,
// and the graceful stop (SIGTERM to the launcher, forwarded, checkpoint, exit 75) is still there
// for a launcher that is asked to stop. The signal is tied to the thread that forked, so
// superviseLaunch forks on the thread that then waits for the ranks. If the launcher died between
// fork and prctl, the rank's parent is already another process: it ends at once. The signal reaches
// the rank's own process, not processes the rank starts (a dtbench rank starts none).
[[noreturn]] void execRank(const LaunchOptions& o, int rank, int port, pid_t launcher, const sigset_t& oldMask,
                           int outFd, int errFd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) raise(SIGKILL);
  setpgid(0, 0);
  sigprocmask(SIG_SETMASK, &oldMask, nullptr);
  dup2(outFd, STDOUT_FILENO);
  dup2(errFd, STDERR_FILENO);
  const int perHost = o.ranksPerHost > 0 ? o.ranksPerHost : o.worldSize;
  const int hostStart = rank / perHost * perHost;
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(o.worldSize).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank - hostStart).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(std::min(perHost, o.worldSize - hostStart)).c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  setenv("DTBENCH_RANKS_PER_HOST", std::to_string(perHost).c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& word : o.command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "dtbench launch: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

void signalRanks(std::vector<Rank>& ranks, int signal) {
  for (Rank& r : ranks)
    if (r.running) {
      r.sent |= 1ULL << signal;
      kill(-r.pid, signal);
    }
}

// After a failed start: kills the ranks already started (their process groups), waits for them
// and closes their pipes, so that nothing is left running when the error is reported.
void stopStartedRanks(std::vector<Rank>& ranks) {
  signalRanks(ranks, SIGKILL);
  for (Rank& r : ranks) {
    if (r.running) {
      while (waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {}
      r.running = false;
    }
    for (Stream& s : r.streams)
      if (s.fd >= 0) {
        close(s.fd);
        s.fd = -1;
      }
  }
}

}  // namespace

int freeLocalPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("dtbench launch: socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    throw std::runtime_error(std::string("dtbench launch: cannot find a free port: ") + std::strerror(errno));
  }
  close(fd);
  return ntohs(address.sin_port);
}

int superviseLaunch(const LaunchOptions& o) {
  const int port = o.masterPort > 0 ? o.masterPort : freeLocalPort();
  // Note [Signals without globals]: SIGINT, SIGTERM and SIGCHLD are blocked and read from a
  // signalfd in the poll loop, so no handler and no global state is needed; ranks get the old mask.
  sigset_t mask, oldMask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, &oldMask);
  const int signalFd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signalFd < 0) {
    const int error = errno;
    sigprocmask(SIG_SETMASK, &oldMask, nullptr);
    throw std::runtime_error(std::string("dtbench launch: signalfd: ") + std::strerror(error));
  }

  // The cgroup's out-of-memory kill count before any rank runs: a rank later ended by a SIGKILL the
  // launcher did not send, while the count rose, was ended by the kernel's out-of-memory killer.
  const std::string memoryEvents = o.memoryEvents ? *o.memoryEvents : common::memoryEventsFile();
  const std::optional<long long> oomKillsBefore = common::oomKills(memoryEvents);

  std::vector<Rank> ranks(o.worldSize);
  const pid_t launcher = getpid();
  for (int r = 0; r < o.worldSize; ++r) {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    pid_t pid = -1;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
      const int error = errno;
      const std::string what = out[0] < 0 || err[0] < 0 ? "pipe" : "fork";
      for (int fd : {out[0], out[1], err[0], err[1]})
        if (fd >= 0) close(fd);
      stopStartedRanks(ranks);
      close(signalFd);
      sigprocmask(SIG_SETMASK, &oldMask, nullptr);
      throw std::runtime_error("dtbench launch: cannot start rank " + std::to_string(r) + " of " +
                               std::to_string(o.worldSize) + " (" + what + ": " + std::strerror(error) + ")" +
                               (r > 0 ? "; the " + std::to_string(r) + " rank(s) already started were killed" : ""));
    }
    if (pid == 0) execRank(o, r, port, launcher, oldMask, out[1], err[1]);
    setpgid(pid, pid);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    close(out[1]);
    close(err[1]);
    ranks[r].pid = pid;
    ranks[r].running = true;
    ranks[r].streams[0] = Stream{out[0], stdout, ""};
    ranks[r].streams[1] = Stream{err[0], stderr, ""};
  }

  std::optional<int> failedRank;
  std::optional<Clock::time_point> killAt;
  int signalsReceived = 0;
  int running = o.worldSize;
  while (true) {
    std::vector<pollfd> fds{{signalFd, POLLIN, 0}};
    std::vector<std::pair<int, int>> owners{{-1, -1}};
    for (int r = 0; r < o.worldSize; ++r)
      for (int s = 0; s < 2; ++s)
        if (ranks[r].streams[s].fd >= 0) {
          fds.push_back({ranks[r].streams[s].fd, POLLIN, 0});
          owners.push_back({r, s});
        }
    if (running == 0 && fds.size() == 1) break;
    poll(fds.data(), fds.size(), running == 0 ? 200 : 100);
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && running > 0) continue;
      Stream& s = ranks[owners[i].first].streams[owners[i].second];
      char buffer[65536];
      const ssize_t n = read(s.fd, buffer, sizeof buffer);
      if (n > 0) {
        s.pending.append(buffer, static_cast<size_t>(n));
        emit(owners[i].first, s, false);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR) || running == 0) {
        emit(owners[i].first, s, true);
        close(s.fd);
        s.fd = -1;
      }
    }
    signalfd_siginfo info;
    while (read(signalFd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      if (info.ssi_signo == SIGINT || info.ssi_signo == SIGTERM) {
        if (++signalsReceived == 1) {
          // The ranks stop at an agreed step and checkpoint (exit 75); the scheduler, not the
          // launcher, owns the deadline after which they are killed.
          std::fprintf(stderr, "dtbench launch: forwarding %s to the ranks\n",
                       strsignal(static_cast<int>(info.ssi_signo)));
          signalRanks(ranks, static_cast<int>(info.ssi_signo));
        } else {
          std::fprintf(stderr, "dtbench launch: second %s: killing the ranks\n",
                       strsignal(static_cast<int>(info.ssi_signo)));
          signalRanks(ranks, SIGKILL);
        }
      }
    }
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      for (int r = 0; r < o.worldSize; ++r) {
        if (ranks[r].pid != pid) continue;
        ranks[r].running = false;
        ranks[r].exitCode = exitCodeOf(status);
        ranks[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        --running;
        // Exit 75 is a rank stopping at an agreed step after SIGTERM: its siblings stop there too.
        if (ranks[r].exitCode != 0 && ranks[r].exitCode != kInterrupted && !failedRank) {
          failedRank = r;
          RankEnd end;
          end.rank = r;
          end.exitCode = ranks[r].exitCode;
          end.signal = ranks[r].signal;
          end.signalFromLaunch = end.signal > 0 && end.signal < 64 && (ranks[r].sent >> end.signal & 1ULL) != 0;
          end.oomKillsBefore = oomKillsBefore;
          if (end.signal == SIGKILL) end.oomKillsAfter = common::oomKills(memoryEvents);
          std::string message = "dtbench launch: " + describeRankEnd(end);
          if (running > 0) {
            char stopping[96];
            std::snprintf(stopping, sizeof stopping, "; stopping the other ranks (SIGTERM, SIGKILL after %.1f s)",
                          static_cast<double>(o.grace.count()) / 1000.0);
            message += stopping;
            signalRanks(ranks, SIGTERM);
            if (!killAt) killAt = Clock::now() + o.grace;
          }
          std::fprintf(stderr, "%s\n", message.c_str());
        }
      }
    }
    if (killAt && running > 0 && Clock::now() >= *killAt) {
      signalRanks(ranks, SIGKILL);
      killAt = Clock::now() + std::chrono::hours(1);
    }
  }
  close(signalFd);
  sigprocmask(SIG_SETMASK, &oldMask, nullptr);
  if (failedRank) return ranks[*failedRank].exitCode;
  for (const Rank& r : ranks)
    if (r.exitCode != 0) return r.exitCode;
  return 0;
}

}  // namespace dtbench::experiments
