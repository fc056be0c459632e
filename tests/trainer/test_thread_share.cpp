// trainer/thread_share.h: the threads of a rank run with --threads 0, its share of the cores it may run on.
#include <catch2/catch.hpp>

#include "trainer/thread_share.h"

using dtbench::trainer::cpuListText;
using dtbench::trainer::parseCpuList;
using dtbench::trainer::sharedCoreThreads;

TEST_CASE("ranks that share a machine's cores split them", "[thread_share]") {
  const std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(sharedCoreThreads({eight}, 0) == 8);                 // one rank: every core
  CHECK(sharedCoreThreads({eight, eight}, 1) == 4);          // two unbound ranks: half each
  CHECK(sharedCoreThreads({eight, eight, eight}, 0) == 2);   // 8/3, rounded down
  CHECK(sharedCoreThreads({{0, 1}, {0, 1}, {0, 1}}, 2) == 1);  // 2/3 of a core: still one thread
}

TEST_CASE("ranks bound to their own cores keep them", "[thread_share]") {
  CHECK(sharedCoreThreads({{0, 1, 2, 3}, {4, 5, 6, 7}}, 0) == 4);
  CHECK(sharedCoreThreads({{0, 1, 2, 3}, {4, 5, 6, 7}}, 1) == 4);
  // Partly shared: rank 0 has CPU 0 alone and shares 1-2 with rank 1: 1 + 2 × 1/2 = 2.
  CHECK(sharedCoreThreads({{0, 1, 2}, {1, 2, 3}}, 0) == 2);
  // Three thirds make a whole core (no rounding below it).
  CHECK(sharedCoreThreads({{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}, 0) == 1);
  CHECK(sharedCoreThreads({{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}}, 1) == 2);
}

TEST_CASE("a rank without a CPU set is refused", "[thread_share]") {
  CHECK_THROWS_AS(sharedCoreThreads({{0, 1}}, 1), std::invalid_argument);
}

TEST_CASE("CPU lists travel as text", "[thread_share]") {
  CHECK(cpuListText({0, 2, 5}) == "0,2,5");
  CHECK(parseCpuList("0,2,5") == std::vector<int>{0, 2, 5});
  CHECK(parseCpuList("3,3,1") == std::vector<int>{3, 1});
  CHECK(parseCpuList("").empty());
}
