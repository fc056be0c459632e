// ExitDeadline (common/exit_deadline.h): a call that returns in time leaves the process alone; one that
// does not ends it with exit status 1 and the message on stderr. The second runs in a forked child.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/exit_deadline.h"

using dtbench::common::ExitDeadline;
using namespace std::chrono_literals;

TEST_CASE("a call that returns within the limit leaves the process running", "[exit_deadline]") {
  const auto start = std::chrono::steady_clock::now();
  {
    const ExitDeadline deadline(10s, "not reached");
    std::this_thread::sleep_for(10ms);
  }
  { const ExitDeadline none(0ms, "no deadline"); }
  // The waiting thread is stopped at once, not at the limit.
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("a call still running at the limit ends the process with status 1 and the message", "[exit_deadline]") {
  char path[] = "/tmp/dtbench-exit-deadline-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(fd, STDERR_FILENO);
    const ExitDeadline deadline(100ms, "MPI_Init_thread did not return within 0.1 s");
    std::this_thread::sleep_for(30s);  // never returns in time
    std::_Exit(0);
  }
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(std::chrono::steady_clock::now() - start < 20s);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "dtbench: error: MPI_Init_thread did not return within 0.1 s\n");
  close(fd);
  std::remove(path);
}
