#include "catch_torch.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "trainer/sync/pair_matching.h"

using dtbench::trainer::pairPartners;

namespace {

// Whether `partner` is a matching of its world: in range, never self, symmetric.
bool isMatching(const std::vector<int>& partner) {
  const int n = static_cast<int>(partner.size());
  for (int r = 0; r < n; ++r) {
    const int p = partner[static_cast<size_t>(r)];
    if (p == -1) continue;
    if (p < 0 || p >= n || p == r || partner[static_cast<size_t>(p)] != r) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a world of one sits every step out", "[pair_matching]") {
  for (int64_t step = 0; step < 5; ++step) {
    CHECK(pairPartners(1, 42, step) == std::vector<int>{-1});
  }
}

TEST_CASE("a world of two always pairs its ranks", "[pair_matching]") {
  for (int64_t step = 0; step < 5; ++step) {
    CHECK(pairPartners(2, 42, step) == std::vector<int>{1, 0});
  }
}

TEST_CASE("partners are an involution with one rank out in odd worlds", "[pair_matching]") {
  for (int world = 1; world <= 17; ++world) {
    for (int64_t step = 0; step < 40; ++step) {
      const auto partner = pairPartners(world, 7, step);
      REQUIRE(partner.size() == static_cast<size_t>(world));
      CHECK(isMatching(partner));
      const auto out = std::count(partner.begin(), partner.end(), -1);
      CHECK(out == (world % 2 == 1 ? 1 : 0));
    }
  }
}

TEST_CASE("the matching is a pure function of world seed and step", "[pair_matching]") {
  CHECK(pairPartners(16, 3, 11) == pairPartners(16, 3, 11));
  CHECK(pairPartners(9, 3, 0) == pairPartners(9, 3, 0));
  // Pinned, so that a change of the shuffle or of its stream cannot go unnoticed: every rank of
  // a run, on every platform, must compute this same matching.
  CHECK(pairPartners(8, 42, 5) == std::vector<int>{4, 7, 5, 6, 0, 2, 3, 1});
  CHECK(pairPartners(5, 42, 7) == std::vector<int>{3, -1, 4, 0, 2});
}

TEST_CASE("the matching depends on the seed and on the step", "[pair_matching]") {
  // 16 ranks have 2027025 perfect matchings: equal draws by chance are out of the question.
  CHECK(pairPartners(16, 1, 5) != pairPartners(16, 2, 5));
  CHECK(pairPartners(16, 1, 5) != pairPartners(16, 1, 6));
  std::set<std::vector<int>> seen;
  for (int64_t step = 0; step < 20; ++step) seen.insert(pairPartners(16, 1, step));
  CHECK(seen.size() == 20);
}

TEST_CASE("over many steps every pair of a world of four meets", "[pair_matching]") {
  // A world of 4 has 3 perfect matchings, each equally likely.
  std::map<std::pair<int, int>, int> meetings;
  const int steps = 3000;
  for (int64_t step = 0; step < steps; ++step) {
    const auto partner = pairPartners(4, 2024, step);
    for (int r = 0; r < 4; ++r) {
      if (r < partner[static_cast<size_t>(r)]) ++meetings[{r, partner[static_cast<size_t>(r)]}];
    }
  }
  REQUIRE(meetings.size() == 6);
  for (const auto& [pair, count] : meetings) {
    INFO("ranks " << pair.first << " and " << pair.second << " met " << count << " times");
    CHECK(count > steps / 3 - 150);
    CHECK(count < steps / 3 + 150);
  }
}

TEST_CASE("in an odd world every rank sits out now and then", "[pair_matching]") {
  std::vector<int> out(5, 0);
  for (int64_t step = 0; step < 200; ++step) {
    const auto partner = pairPartners(5, 99, step);
    for (size_t r = 0; r < partner.size(); ++r) out[r] += partner[r] == -1;
  }
  for (int count : out) CHECK(count > 0);
}

TEST_CASE("pairPartners rejects an empty world and a negative step", "[pair_matching]") {
  CHECK_THROWS_AS(pairPartners(0, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(pairPartners(-3, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(pairPartners(4, 1, -1), std::invalid_argument);
}
