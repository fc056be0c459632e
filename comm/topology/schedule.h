#pragma once
// Schedule: a topology's all-reduce as data (KungFu's "topology as a graph"). Every point-to-point
// topology is a generator of a Schedule (ring.h, tree.h, clique.h, hierarchical.h); one executor
// (comm/schedule_executor.h) runs any Schedule over any PointToPoint.
//
// The tensor is cut into `chunks` contiguous pieces of near-equal length (chunkRange). A Schedule is
// a sequence of steps; in one step every transfer reads the sender's chunks as they were when the
// step began, and the receiver either adds them into its own chunks (`reduce`) or overwrites its
// own with them. Steps run one after another on each rank (a rank waits only for its own transfers
// of the step, so ranks drift apart by at most the data dependencies).
//
// Segmentation (Note [Pipelined schedules] in comm/schedule_executor.h): the executor cuts each
// chunk into segmentCount() segments of near-equal length, segment g of chunk c being
// segmentRange(..., c, g, ...); both are pure, so a model of the executor computes the same pieces.
//
// Invariant of every correct all-reduce Schedule, checked by verifySchedule for every generator and
// world size in tests/comm: simulating the steps on sets of contributing ranks, every rank ends
// with every chunk holding every rank's contribution exactly once.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dtbench::comm {

struct Transfer {
  int src = 0;
  int dst = 0;
  int firstChunk = 0;  // chunks [firstChunk, endChunk)
  int endChunk = 0;
  bool reduce = false;  // true: dst adds; false: dst overwrites
};

struct Step {
  std::vector<Transfer> transfers;
};

struct Schedule {
  std::string topology;
  int worldSize = 1;
  int chunks = 1;
  std::vector<Step> steps;
  // 0: the whole Schedule. P > 0: a slice, for models of worlds too large to list rank by rank (a
  // ring over 65,536 ranks has 2^33 transfers): only the transfers that ranks [0, P) send, of a
  // Schedule that repeats every P ranks (rank r + P does what r does, to the ranks P further on;
  // Topology::slice). The executor and verifySchedule take whole Schedules only.
  int slicePeriod = 0;
};

struct ElementRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Elements of chunks [firstChunk, endChunk) of a tensor of `numel` elements cut into `chunks`:
// chunk c is [numel * c / chunks, numel * (c + 1) / chunks).
ElementRange chunkRange(int64_t numel, int chunks, int firstChunk, int endChunk);

// The most segments a chunk is cut into. 256: a 16 MiB chunk still gets 64 KiB segments, and over 4
// emulated nodes at 200 Mbit/s a tree's 16 MB all-reduce went from 0.82 of its link bound with 64
// segments (256 KiB) to 0.91-0.93 with 128 (128 KiB; docs/benchmarks-history.md, "The walk replayed by the
// model").
constexpr int kMaxSegments = 256;

// Segments per chunk (Note [Pipelined schedules] in comm/schedule_executor.h); 1 when segmentBytes is 0.
// For a tensor of `numel` elements of `elementBytes` each: a chunk of the Schedule (its largest,
// ceil(numel / chunks) elements) cut into pieces of about segmentBytes, floor(chunk bytes /
// segmentBytes) of them, at least 1 and at most kMaxSegments; 1 also for a Schedule without chunks.
// The same on every rank. Throws std::invalid_argument for a negative segmentBytes.
int segmentCount(const Schedule& schedule, int64_t numel, int64_t elementBytes, int64_t segmentBytes);

// Elements of segment g of chunk c: chunkRange(numel, chunks, c, c + 1) cut into `segments`
// near-equal pieces, segment g being [begin + size * g / segments, begin + size * (g + 1) / segments)
// (empty when the chunk has fewer elements than segments).
ElementRange segmentRange(int64_t numel, int chunks, int chunk, int segment, int segments);

// "" when the Schedule is a correct all-reduce (see above), else the first violation in words.
std::string verifySchedule(const Schedule& schedule);

// bytes[src][dst] that the Schedule moves for a tensor of `numel` elements of `elementBytes` each.
std::vector<std::vector<int64_t>> scheduleTraffic(const Schedule& schedule, int64_t numel, int64_t elementBytes);

// The distinct directed edges (src, dst) that carry at least one transfer, sorted.
std::vector<std::pair<int, int>> scheduleEdges(const Schedule& schedule);

}  // namespace dtbench::comm
