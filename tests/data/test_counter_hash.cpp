#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <set>

#include "catch_torch.h"

#include "common/counter_hash.h"
#include "common/split_mix64.h"
#include "data/random_streams.h"

using dtbench::common::counterHash;
using dtbench::common::hashBelow;
using dtbench::data::kStreamCropX;
using dtbench::data::kStreamCropY;
using dtbench::data::kStreamFlip;
using dtbench::data::kStreamShuffle;
using dtbench::common::SplitMix64;

namespace {

int popcount(uint64_t x) { return static_cast<int>(std::bitset<64>(x).count()); }

}  // namespace

TEST_CASE("counterHash is a pure function of its four words", "[counter_hash]") {
  static_assert(counterHash(1, 2, 3, 4) == counterHash(1, 2, 3, 4), "usable at compile time");
  for (uint64_t i = 0; i < 100; ++i) {
    CHECK(counterHash(7, 3, i, kStreamCropY) == counterHash(7, 3, i, kStreamCropY));
  }
}

TEST_CASE("counterHash golden values pin the mixing", "[counter_hash]") {
  // Also what a Python transcription of Note [counterHash mixing] gives.
  // Changing these changes every shuffle and augmentation: see Note [counterHash mixing].
  CHECK(counterHash(0, 0, 0, 0) == 0xaaffdc6c8cf7420bULL);
  CHECK(counterHash(42, 3, 12345, kStreamFlip) == 0xc9159d61a1334ae8ULL);
}

TEST_CASE("counterHash separates streams and slots and seeds and epochs", "[counter_hash]") {
  std::set<uint64_t> seen;
  for (uint64_t stream = 0; stream < 8; ++stream) {
    for (uint64_t i = 0; i < 64; ++i) {
      seen.insert(counterHash(5, 1, i, stream));
    }
  }
  CHECK(seen.size() == 8 * 64);
  CHECK(counterHash(1, 2, 3, kStreamCropX) != counterHash(1, 3, 2, kStreamCropX));
  CHECK(counterHash(1, 2, 3, kStreamCropX) != counterHash(2, 1, 3, kStreamCropX));
  CHECK(counterHash(0, 0, 0, kStreamCropX) != counterHash(0, 0, 0, kStreamCropY));
  CHECK(counterHash(0, 0, 0, kStreamShuffle) != counterHash(0, 1, 0, kStreamShuffle));
}

TEST_CASE("counterHash avalanches: one flipped input bit flips about half the output bits",
          "[counter_hash]") {
  // For every input slot and many inputs: flipping one input bit flips 32 of 64 bits on average,
  // and every output bit flips with probability near 1/2.
  const int kSamples = 2000;
  for (int slot = 0; slot < 4; ++slot) {
    double totalFlipped = 0;
    int trials = 0;
    std::array<int, 64> perBit{};
    for (int s = 0; s < kSamples; ++s) {
      uint64_t words[4] = {counterHash(99, 0, static_cast<uint64_t>(s), 0) % 1000,
                           static_cast<uint64_t>(s % 90), static_cast<uint64_t>(s),
                           static_cast<uint64_t>(s % 7)};
      const int bit = s % 64;
      const uint64_t base = counterHash(words[0], words[1], words[2], words[3]);
      words[slot] ^= uint64_t{1} << bit;
      const uint64_t diff = base ^ counterHash(words[0], words[1], words[2], words[3]);
      totalFlipped += popcount(diff);
      for (int b = 0; b < 64; ++b) {
        perBit[static_cast<size_t>(b)] += static_cast<int>((diff >> b) & 1);
      }
      ++trials;
    }
    INFO("slot " << slot);
    CHECK(totalFlipped / trials == Approx(32.0).margin(0.5));
    for (int b = 0; b < 64; ++b) {
      INFO("output bit " << b);
      CHECK(perBit[static_cast<size_t>(b)] / static_cast<double>(trials) ==
            Approx(0.5).margin(0.06));
    }
  }
}

TEST_CASE("hashBelow stays in range and covers it", "[counter_hash]") {
  std::array<int, 9> counts{};
  for (uint64_t i = 0; i < 9000; ++i) {
    const uint64_t v = hashBelow(counterHash(3, 0, i, kStreamCropY), 9);
    REQUIRE(v < 9);
    ++counts[v];
  }
  for (int c : counts) {
    CHECK(c == Approx(1000).margin(150));
  }
  CHECK(hashBelow(~uint64_t{0}, 1) == 0);
}

TEST_CASE("SplitMix64 is deterministic and below() respects its bound", "[counter_hash]") {
  SplitMix64 a(123);
  SplitMix64 b(123);
  for (int i = 0; i < 100; ++i) {
    CHECK(a.next() == b.next());
  }
  SplitMix64 c(0);
  CHECK(c.next() == dtbench::common::mix64(SplitMix64::kGamma));
  SplitMix64 d(9);
  for (uint64_t bound : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{1000}, ~uint64_t{0}}) {
    for (int i = 0; i < 200; ++i) {
      CHECK(d.below(bound) < bound);
    }
  }
}
