#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "catch_torch.h"

#include "data/sampler.h"

using dtbench::data::DistributedSampler;
using dtbench::data::epochPermutation;

namespace {

bool isPermutation(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  std::vector<int64_t> iota(static_cast<size_t>(n));
  std::iota(iota.begin(), iota.end(), int64_t{0});
  return v == iota;
}

// torch.utils.data.DistributedSampler.__iter__, transcribed line by line (PyTorch 1.13/2.x),
// with `list` standing for torch.randperm(n, generator) or range(n).
std::vector<int64_t> pytorchDistributedSampler(std::vector<int64_t> indices, int64_t numReplicas,
                                               int64_t rank, bool dropLast) {
  const auto n = static_cast<int64_t>(indices.size());
  int64_t numSamples = 0;
  if (dropLast && n % numReplicas != 0) {
    // math.ceil((len(dataset) - num_replicas) / num_replicas), Python's true division
    const double q = static_cast<double>(n - numReplicas) / static_cast<double>(numReplicas);
    numSamples = static_cast<int64_t>(std::ceil(q));
  } else {
    numSamples = static_cast<int64_t>(
        std::ceil(static_cast<double>(n) / static_cast<double>(numReplicas)));
  }
  const int64_t totalSize = numSamples * numReplicas;
  if (!dropLast) {
    const int64_t paddingSize = totalSize - n;
    if (paddingSize <= n) {
      // indices += indices[:padding_size]
      indices.insert(indices.end(), indices.begin(), indices.begin() + paddingSize);
    } else {
      // indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
      const auto copies = static_cast<int64_t>(
          std::ceil(static_cast<double>(paddingSize) / static_cast<double>(n)));
      std::vector<int64_t> repeated;
      for (int64_t c = 0; c < copies; ++c) {
        repeated.insert(repeated.end(), indices.begin(), indices.begin() + n);
      }
      indices.insert(indices.end(), repeated.begin(), repeated.begin() + paddingSize);
    }
  } else {
    indices.resize(static_cast<size_t>(totalSize));  // indices[:total_size]
  }
  REQUIRE(static_cast<int64_t>(indices.size()) == totalSize);
  std::vector<int64_t> mine;  // indices[rank:total_size:num_replicas]
  for (int64_t p = rank; p < totalSize; p += numReplicas) {
    mine.push_back(indices[static_cast<size_t>(p)]);
  }
  REQUIRE(static_cast<int64_t>(mine.size()) == numSamples);
  return mine;
}

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

}  // namespace

TEST_CASE("epochPermutation is a deterministic permutation", "[sampler]") {
  for (int64_t n : {0, 1, 2, 3, 10, 257, 50000}) {
    INFO("n = " << n);
    const auto p = epochPermutation(7, 2, n);
    CHECK(static_cast<int64_t>(p.size()) == n);
    CHECK(isPermutation(p, n));
    CHECK(p == epochPermutation(7, 2, n));
  }
}

TEST_CASE("epochPermutation differs across epochs and seeds", "[sampler]") {
  const auto base = epochPermutation(0, 0, 1000);
  CHECK(base != range(1000));
  CHECK(base != epochPermutation(0, 1, 1000));
  CHECK(base != epochPermutation(1, 0, 1000));
  std::set<std::vector<int64_t>> epochs;
  for (int64_t e = 0; e < 20; ++e) {
    epochs.insert(epochPermutation(3, e, 50));
  }
  CHECK(epochs.size() == 20);
}

TEST_CASE("epochPermutation is roughly uniform", "[sampler]") {
  // Where element 0 lands, over many epochs, is spread evenly over 10 positions.
  std::vector<int> where(10, 0);
  const int kEpochs = 5000;
  for (int64_t e = 0; e < kEpochs; ++e) {
    const auto p = epochPermutation(11, e, 10);
    ++where[static_cast<size_t>(std::find(p.begin(), p.end(), 0) - p.begin())];
  }
  for (int w : where) {
    CHECK(w == Approx(kEpochs / 10).margin(kEpochs / 10 * 0.2));
  }
}

TEST_CASE("epochPermutation golden prefix (reproducibility across versions)", "[sampler]") {
  // If this fails, every shuffled run of dtbench changes order: only update it on purpose.
  const auto p = epochPermutation(42, 3, 50000);
  // A Python transcription of the documented algorithm (counterHash, SplitMix64, below(),
  // Fisher-Yates from the end) gives the same prefix.
  const std::vector<int64_t> golden = {233,  2615,  40205, 11427, 47590, 11797,
                                       5089, 27927, 24662, 2705,  39995, 1449};
  CHECK(std::vector<int64_t>(p.begin(), p.begin() + 12) == golden);
}

TEST_CASE("epochPermutation rejects bad arguments", "[sampler]") {
  CHECK_THROWS_AS(epochPermutation(0, 0, -1), std::invalid_argument);
  CHECK_THROWS_AS(epochPermutation(0, -1, 10), std::invalid_argument);
}

TEST_CASE("DistributedSampler without shuffle matches hand-computed PyTorch lists",
          "[sampler]") {
  SECTION("n = 5, N = 2: padding wraps to the start") {
    CHECK(DistributedSampler(5, 0, 2, 0, false, false).indices(0) ==
          std::vector<int64_t>{0, 2, 4});
    CHECK(DistributedSampler(5, 1, 2, 0, false, false).indices(0) ==
          std::vector<int64_t>{1, 3, 0});
    CHECK(DistributedSampler(5, 0, 2, 0, false, true).indices(0) == std::vector<int64_t>{0, 2});
    CHECK(DistributedSampler(5, 1, 2, 0, false, true).indices(0) == std::vector<int64_t>{1, 3});
  }
  SECTION("n = 10, N = 4: list 0..9 0 1") {
    CHECK(DistributedSampler(10, 0, 4, 0, false, false).indices(0) ==
          std::vector<int64_t>{0, 4, 8});
    CHECK(DistributedSampler(10, 1, 4, 0, false, false).indices(0) ==
          std::vector<int64_t>{1, 5, 9});
    CHECK(DistributedSampler(10, 2, 4, 0, false, false).indices(0) ==
          std::vector<int64_t>{2, 6, 0});
    CHECK(DistributedSampler(10, 3, 4, 0, false, false).indices(0) ==
          std::vector<int64_t>{3, 7, 1});
  }
  SECTION("n = 2, N = 5 (n < N): the list wraps more than once") {
    // list 0 1 0 1 0: one sample each
    const std::vector<std::vector<int64_t>> expected = {{0}, {1}, {0}, {1}, {0}};
    for (int64_t r = 0; r < 5; ++r) {
      DistributedSampler s(2, r, 5, 0, false, false);
      CHECK(s.indices(0) == expected[static_cast<size_t>(r)]);
      CHECK(s.numSamples() == 1);
      CHECK(s.totalSize() == 5);
      DistributedSampler dropped(2, r, 5, 0, false, true);
      CHECK(dropped.numSamples() == 0);
      CHECK(dropped.indices(0).empty());
    }
  }
  SECTION("n = 3, N = 8: three wraps") {
    // list 0 1 2 0 1 2 0 1
    const std::vector<int64_t> expected = {0, 1, 2, 0, 1, 2, 0, 1};
    for (int64_t r = 0; r < 8; ++r) {
      CHECK(DistributedSampler(3, r, 8, 0, false, false).indices(0) ==
            std::vector<int64_t>{expected[static_cast<size_t>(r)]});
    }
  }
  SECTION("a shuffled list wraps the same way") {
    // The padded tail repeats the head of the epoch's permutation.
    const auto perm = epochPermutation(4, 1, 7);
    CHECK(DistributedSampler(7, 0, 3, 4, true, false).indices(1) ==
          std::vector<int64_t>{perm[0], perm[3], perm[6]});
    CHECK(DistributedSampler(7, 1, 3, 4, true, false).indices(1) ==
          std::vector<int64_t>{perm[1], perm[4], perm[0]});
    CHECK(DistributedSampler(7, 2, 3, 4, true, false).indices(1) ==
          std::vector<int64_t>{perm[2], perm[5], perm[1]});
  }
}

TEST_CASE("DistributedSampler equals PyTorch's algorithm and shards correctly", "[sampler]") {
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {0, 1},  {0, 3},  {1, 1},  {1, 4},  {2, 5},   {5, 2},   {7, 3},  {10, 4},
      {12, 4}, {13, 1}, {16, 8}, {17, 8}, {100, 7}, {101, 3}, {50, 64}};
  for (const auto& [n, world] : cases) {
    for (bool dropLast : {false, true}) {
      for (bool shuffle : {false, true}) {
        INFO("n = " << n << ", N = " << world << ", dropLast = " << dropLast
                    << ", shuffle = " << shuffle);
        const int64_t epoch = 5;
        const auto list = shuffle ? epochPermutation(9, epoch, n) : range(n);
        std::vector<int64_t> all;
        std::vector<std::set<int64_t>> perRank;
        const int64_t expectedSamples = dropLast ? n / world : (n + world - 1) / world;
        for (int64_t r = 0; r < world; ++r) {
          DistributedSampler sampler(n, r, world, 9, shuffle, dropLast);
          const auto mine = sampler.indices(epoch);
          CHECK(mine == pytorchDistributedSampler(list, world, r, dropLast));
          CHECK(sampler.numSamples() == expectedSamples);
          CHECK(sampler.totalSize() == expectedSamples * world);
          CHECK(static_cast<int64_t>(mine.size()) == expectedSamples);  // equal lengths
          all.insert(all.end(), mine.begin(), mine.end());
          perRank.emplace_back(mine.begin(), mine.end());
        }
        const std::set<int64_t> distinct(all.begin(), all.end());
        if (dropLast || n % world == 0) {
          // No padding: ranks are disjoint; their union is the first totalSize list entries.
          CHECK(distinct.size() == all.size());
          CHECK(distinct == std::set<int64_t>(list.begin(), list.begin() + (n / world) * world));
        } else {
          // Padding: every sample is seen; list[j] appears once per wrap that reaches it.
          CHECK(distinct == std::set<int64_t>(list.begin(), list.end()));
          const int64_t total = expectedSamples * world;
          std::map<int64_t, int64_t> times;
          for (int64_t i : all) {
            ++times[i];
          }
          for (int64_t j = 0; j < n; ++j) {
            CHECK(times[list[static_cast<size_t>(j)]] == total / n + (j < total % n ? 1 : 0));
          }
        }
        for (int64_t i : all) {
          CHECK((i >= 0 && i < n));
        }
      }
    }
  }
}

TEST_CASE("DistributedSampler: shuffle follows the epoch and no shuffle keeps dataset order",
          "[sampler]") {
  DistributedSampler ordered(10, 0, 1, 3, false, false);
  CHECK(ordered.indices(0) == range(10));
  CHECK(ordered.indices(7) == range(10));
  DistributedSampler shuffled(1000, 0, 1, 3, true, false);
  CHECK(shuffled.indices(0) == epochPermutation(3, 0, 1000));
  CHECK(shuffled.indices(1) == epochPermutation(3, 1, 1000));
  CHECK(shuffled.indices(0) != shuffled.indices(1));
}

TEST_CASE("DistributedSampler validates its arguments", "[sampler]") {
  CHECK_THROWS_WITH(DistributedSampler(10, 0, 0, 0, true, false),
                    Catch::Contains("world size must be >= 1, got 0"));
  CHECK_THROWS_WITH(DistributedSampler(10, 2, 2, 0, true, false),
                    Catch::Contains("got 2"));
  CHECK_THROWS_WITH(DistributedSampler(10, -1, 2, 0, true, false),
                    Catch::Contains("got -1"));
  CHECK_THROWS_WITH(DistributedSampler(-5, 0, 1, 0, true, false),
                    Catch::Contains("dataset size must be >= 0, got -5"));
  CHECK_THROWS_AS(DistributedSampler(10, 3, 2, 0, true, false), std::invalid_argument);
}

// A resume at another world size (data/sampler.h): after k steps at world N and batch B the ranks have
// consumed exactly the prefix 0 .. kBN-1 of the epoch's list, and a sampler with `start` = that prefix
// deals the rest to the new world so that the epoch trains every position once, drop-last or padding
// applied once, at its end.
namespace {

// Dataset indices a world of `world` ranks takes from `start` on: every rank's whole share.
std::vector<int64_t> dealt(int64_t n, int64_t world, uint64_t seed, bool dropLast, int64_t start, int64_t epoch) {
  std::vector<int64_t> all;
  for (int64_t r = 0; r < world; ++r) {
    const std::vector<int64_t> mine = DistributedSampler(n, r, world, seed, true, dropLast, start).indices(epoch);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  return all;
}

}  // namespace

TEST_CASE("the steps of one world consume a prefix of the epoch's list", "[sampler][resize]") {
  const int64_t n = 203, seed = 11, epoch = 2;
  const std::vector<int64_t> order = epochPermutation(seed, epoch, n);
  for (const auto& [world, batch, steps] : {std::tuple{4, 8, 3}, std::tuple{2, 16, 5}, std::tuple{3, 5, 1}}) {
    std::multiset<int64_t> taken;
    for (int64_t r = 0; r < world; ++r) {
      const std::vector<int64_t> mine = DistributedSampler(n, r, world, seed, true, false).indices(epoch);
      taken.insert(mine.begin(), mine.begin() + steps * batch);  // the first `steps` batches
    }
    const int64_t consumed = dtbench::data::consumedPositions(0, steps, batch, world);
    CHECK(consumed == steps * batch * world);
    CHECK(taken == std::multiset<int64_t>(order.begin(), order.begin() + consumed));
  }
  CHECK(dtbench::data::consumedPositions(40, 2, 16, 2) == 104);  // a second resize inside the same epoch
  CHECK_THROWS_AS(dtbench::data::consumedPositions(0, -1, 8, 4), std::invalid_argument);
}

TEST_CASE("the rest of an epoch dealt to a new world covers the dataset once", "[sampler][resize]") {
  const uint64_t seed = 5;
  const int64_t epoch = 1;
  for (const int64_t n : {203, 256, 97}) {
    const std::vector<int64_t> order = epochPermutation(seed, epoch, n);
    for (const auto& [oldWorld, batch, steps, newWorld] :
         {std::tuple{4, 8, 3, 2}, std::tuple{2, 16, 2, 4}, std::tuple{4, 2, 5, 3}, std::tuple{1, 7, 4, 5}}) {
      const int64_t start = dtbench::data::consumedPositions(0, steps, batch, oldWorld);
      REQUIRE(start < n);
      std::map<int64_t, int64_t> count;
      for (int64_t p = 0; p < start; ++p) ++count[order[static_cast<size_t>(p)]];
      const std::vector<int64_t> rest = dealt(n, newWorld, seed, /*dropLast=*/false, start, epoch);
      for (int64_t i : rest) ++count[i];
      // Without drop-last: every index once, and the padding (what makes the rest a whole number of samples
      // per rank) wraps around to the permutation's first indices, each once more.
      const int64_t pad = (n - start + newWorld - 1) / newWorld * newWorld - (n - start);
      CHECK(static_cast<int64_t>(count.size()) == n);
      for (int64_t p = 0; p < n; ++p)
        CHECK(count[order[static_cast<size_t>(p)]] == (p < pad ? 2 : 1));

      // With drop-last: the prefix and the new shares are distinct, and only the rest's last (n - start)
      // mod newWorld positions, at the epoch's end, are left out.
      std::map<int64_t, int64_t> once;
      for (int64_t p = 0; p < start; ++p) ++once[order[static_cast<size_t>(p)]];
      for (int64_t i : dealt(n, newWorld, seed, /*dropLast=*/true, start, epoch)) ++once[i];
      const int64_t kept = start + (n - start) / newWorld * newWorld;
      CHECK(static_cast<int64_t>(once.size()) == kept);
      for (int64_t p = 0; p < n; ++p) CHECK(once[order[static_cast<size_t>(p)]] == (p < kept ? 1 : 0));
    }
  }
}

TEST_CASE("a sampler with consumed positions, worked by hand", "[sampler][resize]") {
  // n = 10, no shuffle: 4 ranks x batch 1 took one step (positions 0-3); the rest, 4..9, goes to the new world.
  const auto ranksOf = [](int64_t world, bool dropLast) {
    std::vector<std::vector<int64_t>> out;
    for (int64_t r = 0; r < world; ++r) out.push_back(DistributedSampler(10, r, world, 0, false, dropLast, 4).indices(0));
    return out;
  };
  CHECK(ranksOf(2, false) == std::vector<std::vector<int64_t>>{{4, 6, 8}, {5, 7, 9}});
  // 6 left over 4 ranks: padded with the list's first two, or cut to one each with drop-last.
  CHECK(ranksOf(4, false) == std::vector<std::vector<int64_t>>{{4, 8}, {5, 9}, {6, 0}, {7, 1}});
  CHECK(ranksOf(4, true) == std::vector<std::vector<int64_t>>{{4}, {5}, {6}, {7}});
  // Everything consumed (a finished epoch): nothing left to deal.
  CHECK(DistributedSampler(10, 1, 3, 0, false, false, 10).indices(0).empty());
  CHECK_THROWS_AS(DistributedSampler(10, 0, 2, 0, false, false, 11), std::invalid_argument);
  CHECK_THROWS_AS(DistributedSampler(10, 0, 2, 0, false, false, -1), std::invalid_argument);
}
