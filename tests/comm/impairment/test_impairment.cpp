#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch_torch.h"
#include "comm/point_to_point.h"
#include "comm/topology/schedule.h"
#include "comm/work.h"

#include "comm/impairment/impaired_point_to_point.h"
#include "comm/impairment/impairment.h"
#include "comm/schedule_executor.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "in_process_fixture.h"

using dtbench::comm::ImpairedPointToPoint;
using dtbench::comm::Impairment;
using dtbench::comm::PointToPoint;

TEST_CASE("the impairment model holds a message by delay plus bytes over rate plus lost segments", "[impairment]") {
  Impairment impairment;
  impairment.delayMs = 1;
  impairment.rateGbps = 10;
  impairment.rtoMs = 200;
  // 1 MB at 10 Gbit/s: 8e6 bits / 1e10 bit/s = 0.8 ms; plus 1 ms of delay; plus 2 x 200 ms.
  CHECK(impairment.holdSeconds(1000000, 0) == Approx(0.0018));
  CHECK(impairment.holdSeconds(1000000, 2) == Approx(0.4018));
  CHECK(Impairment::segments(1448) == 1);
  CHECK(Impairment::segments(1449) == 2);
  CHECK(Impairment::segments(1000000) == 691);
  CHECK_FALSE(Impairment{}.active());
  CHECK(impairment.active());
}

TEST_CASE("bad impairment flags are named", "[impairment]") {
  Impairment impairment;
  impairment.delayMs = -1;
  const std::string delayRule = "--inject-delay-ms must be from 0 to 2592000000 (30 days, the longest --timeout)";
  CHECK(dtbench::comm::checkImpairment(impairment) == delayRule);
  impairment.delayMs = 1e300;  // was accepted, and its hold overflowed to none
  CHECK(dtbench::comm::checkImpairment(impairment) == delayRule);
  impairment.delayMs = 2592000e3;
  CHECK(dtbench::comm::checkImpairment(impairment).empty());
  impairment = Impairment{};
  impairment.lossPercent = 100;
  CHECK(dtbench::comm::checkImpairment(impairment) == "--inject-loss-pct is a percentage in [0, 100)");
  impairment = Impairment{};
  impairment.rtoMs = 0;
  CHECK(dtbench::comm::checkImpairment(impairment) == "--inject-rto-ms must be > 0");
  CHECK(dtbench::comm::checkImpairment(Impairment{}).empty());
}

TEST_CASE("an impaired ring all-reduce is exact and every send is held", "[impairment]") {
  Impairment impairment;
  impairment.delayMs = 20;
  const auto results = dtbench::comm::testing::runRanks<double>(3, [&](PointToPoint& p2p) {
    ImpairedPointToPoint impaired(p2p, impairment);
    at::Tensor values = at::full({1000}, static_cast<float>(p2p.rank() + 1));
    const auto start = std::chrono::steady_clock::now();
    const dtbench::comm::Schedule ring =
        dtbench::comm::makeSchedule("ring", dtbench::comm::hostsFromRanksPerHost(3, 3));
    dtbench::comm::runSchedule(ring, impaired, values);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!values.eq(6.0f).all().item<bool>()) throw std::runtime_error("wrong sum");
    // A ring over 3 ranks is 4 steps of one send each: at least 4 x 20 ms held.
    if (impaired.heldSeconds() != Approx(0.08)) throw std::runtime_error("held " + std::to_string(impaired.heldSeconds()));
    return elapsed;
  });
  for (double elapsed : results) CHECK(elapsed >= 0.08);
}

TEST_CASE("injected segment losses follow the binomial model and the seed", "[impairment]") {
  Impairment impairment;
  impairment.lossPercent = 1;
  impairment.rtoMs = 1e-6;  // keep the test fast: count losses, do not wait for them
  impairment.seed = 7;
  // Each rank sends 300 messages of 100 segments (1448 x 25 floats) to the other.
  auto countLosses = [&] {
    return dtbench::comm::testing::runRanks<int64_t>(2, [&](PointToPoint& p2p) {
      ImpairedPointToPoint impaired(p2p, impairment);
      at::Tensor message = at::zeros({1448 * 25}, at::kFloat);
      at::Tensor incoming = at::empty_like(message);
      for (int i = 0; i < 300; ++i) {
        auto sent = impaired.send(message, 1 - p2p.rank(), 0);
        impaired.recv(incoming, 1 - p2p.rank(), 0)->wait();
        sent->wait();
      }
      return impaired.lostSegments();
    });
  };
  const std::vector<int64_t> lost = countLosses();
  // 30,000 segments x 1 %: 300 expected, standard deviation about 17.
  for (int64_t l : lost) {
    CHECK(l > 200);
    CHECK(l < 400);
  }
  CHECK(lost[0] != lost[1]);        // each rank draws its own stream
  CHECK(countLosses() == lost);     // same seed, same draws
}

TEST_CASE("a hold not shorter than --timeout is refused at once, naming both", "[impairment]") {
  Impairment impairment;
  impairment.delayMs = 40000;
  dtbench::comm::HoldBounds bounds;
  bounds.timeout = std::chrono::milliseconds(5000);
  const auto messages = dtbench::comm::testing::runRanks<std::string>(2, [&](PointToPoint& p2p) {
    ImpairedPointToPoint impaired(p2p, impairment, bounds);
    try {
      impaired.send(at::zeros({10}), 1 - p2p.rank(), 0);
    } catch (const dtbench::comm::CommError& e) {
      if (impaired.heldSeconds() != 0) throw std::runtime_error("held before refusing");
      return std::string(e.what());
    }
    return std::string("sent");
  });
  for (const std::string& m : messages) {
    CHECK_THAT(m, Catch::Contains("would be held 40.000 s by the injected impairment (--inject-delay-ms 40000"));
    CHECK_THAT(m, Catch::Contains("not less than --timeout 5.000 s"));
    CHECK_THAT(m, Catch::Contains("Lower the impairment or raise --timeout"));
  }
}

TEST_CASE("the run's stop signal ends a hold, and the message still goes", "[impairment]") {
  Impairment impairment;
  impairment.delayMs = 600000;  // ten minutes: only the stop ends it
  std::atomic<bool> stop{false};
  dtbench::comm::HoldBounds bounds;
  bounds.timeout = std::chrono::milliseconds(3600000);
  bounds.stopRequested = [&] { return stop.load(); };
  std::thread signal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop = true;
  });
  const auto held = dtbench::comm::testing::runRanks<double>(2, [&](PointToPoint& p2p) {
    ImpairedPointToPoint impaired(p2p, impairment, bounds);
    at::Tensor out = at::full({10}, static_cast<float>(p2p.rank() + 1));
    at::Tensor in = at::zeros({10});
    auto sent = impaired.send(out, 1 - p2p.rank(), 0);
    impaired.recv(in, 1 - p2p.rank(), 0)->wait();
    sent->wait();
    if (!in.eq(static_cast<float>(2 - p2p.rank())).all().item<bool>()) throw std::runtime_error("wrong message");
    return impaired.heldSeconds();
  });
  signal.join();
  for (double seconds : held) {
    CHECK(seconds > 0);
    CHECK(seconds < 600);  // ended by the stop, not by the hold's end
  }
}
