#include "catch_torch.h"

#include <csignal>
#include <initializer_list>
#include <stdexcept>

#include "trainer/stop_signal.h"

using dtbench::trainer::StopSignalHandler;

namespace {

volatile std::sig_atomic_t testHandlerCalls = 0;

extern "C" void countTestSignal(int) { testHandlerCalls = testHandlerCalls + 1; }

// Installs countTestSignal for `signal` while it lives, and puts back what was there before
// (Catch2's own fatal-signal handler while a test runs).
class TestHandler {
 public:
  explicit TestHandler(int signal) : signal_(signal) {
    struct sigaction action {};
    action.sa_handler = countTestSignal;
    sigemptyset(&action.sa_mask);
    sigaction(signal_, &action, &previous_);
    testHandlerCalls = 0;
  }
  ~TestHandler() { sigaction(signal_, &previous_, nullptr); }
  TestHandler(const TestHandler&) = delete;
  TestHandler& operator=(const TestHandler&) = delete;

 private:
  int signal_;
  struct sigaction previous_ {};
};

}  // namespace

TEST_CASE("SIGTERM sets the stop flag and does not end the process", "[stop_signal]") {
  StopSignalHandler handler;
  CHECK_FALSE(handler.requested());
  CHECK(handler.signalNumber() == 0);
  REQUIRE(std::raise(SIGTERM) == 0);
  CHECK(handler.requested());
  CHECK(handler.signalNumber() == SIGTERM);
  handler.clear();
  CHECK_FALSE(handler.requested());
  CHECK(handler.signalNumber() == 0);
}

TEST_CASE("SIGINT sets the stop flag too, and the first signal is the one recorded", "[stop_signal]") {
  StopSignalHandler handler;
  REQUIRE(std::raise(SIGINT) == 0);
  CHECK(handler.signalNumber() == SIGINT);
  REQUIRE(std::raise(SIGTERM) == 0);
  CHECK(handler.signalNumber() == SIGINT);
  handler.clear();
  REQUIRE(std::raise(SIGTERM) == 0);
  CHECK(handler.signalNumber() == SIGTERM);
}

TEST_CASE("the previous handlers are back once the StopSignalHandler is gone", "[stop_signal]") {
  for (const int signal : {SIGTERM, SIGINT}) {
    TestHandler previous(signal);
    {
      StopSignalHandler handler;
      REQUIRE(std::raise(signal) == 0);
      CHECK(handler.signalNumber() == signal);
      CHECK(testHandlerCalls == 0);
    }
    REQUIRE(std::raise(signal) == 0);
    CHECK(testHandlerCalls == 1);
  }
}

TEST_CASE("a new handler starts clear", "[stop_signal]") {
  {
    StopSignalHandler handler;
    REQUIRE(std::raise(SIGTERM) == 0);
    CHECK(handler.requested());
  }
  StopSignalHandler next;
  CHECK_FALSE(next.requested());
}

TEST_CASE("only one StopSignalHandler may be alive at a time", "[stop_signal]") {
  StopSignalHandler handler;
  CHECK_THROWS_AS(StopSignalHandler(), std::logic_error);
  REQUIRE(std::raise(SIGTERM) == 0);
  CHECK(handler.signalNumber() == SIGTERM);  // the failed second one left the first in place
}
