#include "comm/topology/executor.h"

#include <stdexcept>

#include "comm/element_type.h"

namespace dtbench::comm {
namespace {

struct Incoming {
  const Transfer* transfer;
  ElementRange range;
  at::Tensor buffer;
};

// Applies one step's received chunks to `flat`, grouping the reductions into one range so that
// reduced-precision sums happen in float32 (Note [Reduced-precision sums]).
void applyIncoming(const std::vector<Incoming>& incoming, const at::Tensor& flat) {
  const bool lowPrecision = flat.scalar_type() != at::kFloat;
  size_t i = 0;
  while (i < incoming.size()) {
    const Incoming& first = incoming[i];
    at::Tensor target = flat.narrow(0, first.range.begin, first.range.size());
    if (!first.transfer->reduce) {
      target.copy_(first.buffer);
      ++i;
      continue;
    }
    size_t j = i;
    if (lowPrecision) {
      at::Tensor sum = target.to(at::kFloat);
      for (; j < incoming.size() && incoming[j].transfer->reduce && incoming[j].range.begin == first.range.begin &&
             incoming[j].range.end == first.range.end;
           ++j)
        sum.add_(incoming[j].buffer.to(at::kFloat));
      target.copy_(sum);
    } else {
      for (; j < incoming.size() && incoming[j].transfer->reduce && incoming[j].range.begin == first.range.begin &&
             incoming[j].range.end == first.range.end;
           ++j)
        target.add_(incoming[j].buffer);
    }
    i = j;
  }
}

}  // namespace

void runSchedule(const Schedule& schedule, PointToPoint& p2p, const at::Tensor& tensor) {
  if (p2p.size() != schedule.worldSize)
    throw std::invalid_argument("schedule '" + schedule.topology + "' is for " + std::to_string(schedule.worldSize) +
                                " ranks but the communicator has " + std::to_string(p2p.size()));
  if (!tensor.device().is_cpu() || !tensor.is_contiguous())
    throw std::invalid_argument("point-to-point all-reduce needs a contiguous CPU tensor");
  elementTypeOf(tensor.scalar_type());
  const at::Tensor flat = tensor.view({-1});
  const int64_t numel = flat.numel();
  const int self = p2p.rank();
  for (size_t s = 0; s < schedule.steps.size(); ++s) {
    const int tag = static_cast<int>(s % (PointToPoint::kMaxTag + 1));
    std::vector<Incoming> incoming;
    std::vector<WorkPtr> works;
    for (const Transfer& t : schedule.steps[s].transfers) {
      const ElementRange range = chunkRange(numel, schedule.chunks, t.firstChunk, t.endChunk);
      if (range.size() == 0) continue;  // both sides skip empty chunks
      if (t.dst == self) {
        incoming.push_back(Incoming{&t, range, at::empty({range.size()}, flat.options())});
        works.push_back(p2p.recv(incoming.back().buffer, t.src, tag));
      }
    }
    for (const Transfer& t : schedule.steps[s].transfers) {
      const ElementRange range = chunkRange(numel, schedule.chunks, t.firstChunk, t.endChunk);
      if (range.size() == 0 || t.src != self) continue;
      works.push_back(p2p.send(flat.narrow(0, range.begin, range.size()), t.dst, tag));
    }
    waitAll(works);
    applyIncoming(incoming, flat);
  }
}

}  // namespace dtbench::comm
