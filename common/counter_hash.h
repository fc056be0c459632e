#pragma once
// counterHash: the one source of randomness of dtbench's data order and augmentation, and of every other
// draw that must come out the same on every rank (docs/design.md, "Randomness contract").
//
// Contract: counterHash(seed, epoch, index, stream) is a pure function of its four words that
// returns 64 well-mixed bits. Nothing is stateful, so a value can be recomputed anywhere (any
// rank, worker thread, LibTorch version or platform) and always comes out the same. `stream`
// separates the uses of one (seed, epoch, index) triple: the shuffle, a sample's crop offsets and
// its flip draw from different streams and so are independent of each other (data/random_streams.h
// lists data/'s streams).
//
// Note [counterHash mixing]
// Each word is absorbed in turn into a 64-bit state that is then remixed with SplitMix64's
// finalizer (Steele, Lea & Flood 2014; David Stafford's "Mix13" constants), a bijection in which
// every input bit flips each output bit with probability close to 1/2:
//   h = mix64(seed ^ K0); h = mix64(h ^ epoch ^ K1); h = mix64(h ^ index ^ K2);
//   h = mix64(h ^ stream ^ K3)
// The per-slot constants K0..K3 keep the slots apart (swapping epoch and index changes the
// result) and keep an all-zero input away from mix64's fixed point at 0. Four finalizer rounds
// cost about 12 multiplies: negligible next to the pixels they decide.
// Changing any constant here changes every shuffle and augmentation dtbench has ever produced;
// tests/data pins golden values so that such a change cannot go unnoticed.

#include <cstdint>

namespace dtbench::common {

// SplitMix64's output function: a bijection on 64-bit words with full avalanche.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t counterHash(uint64_t seed, uint64_t epoch, uint64_t index, uint64_t stream) {
  uint64_t h = mix64(seed ^ 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ epoch ^ 0x3c6ef372fe94f82aULL);
  h = mix64(h ^ index ^ 0xdaa66d2c7ddf743fULL);
  return mix64(h ^ stream ^ 0x78dde6e5fd29f054ULL);
}

// A uniform integer in [0, range) from the high 32 bits of a hash (multiply-shift; the bias is
// at most range / 2^32, far below anything a training run can notice). range must be in [1, 2^32].
constexpr uint64_t hashBelow(uint64_t hash, uint64_t range) { return ((hash >> 32) * range) >> 32; }

}  // namespace dtbench::common
