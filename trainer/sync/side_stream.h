#pragma once
// SideStream: a pool stream of a GPU that work is moved onto, ordered by events after the work it
// depends on. Two users:
//  - the communication thread (trainer/sync/bucketed_allreduce.h; docs/gpu.md, "Communication off
//    the compute stream"). On the device's default stream, the one backward runs on, a bucket's
//    copies would start only once every backward kernel queued before them is done; on a side stream,
//    ordered by an event recorded the moment the bucket's last gradient was accumulated, the copies
//    and the collective (NCCL orders its own stream after the current one) wait for exactly the work
//    they need, and the compute stream waits for the side stream once, after backward;
//  - --cuda-graph's steps (trainer/step/train_step.h): every step, eager or replayed, on one stream that
//    is not the default one (a CUDA graph cannot be captured there), after what was queued before.
//
//   std::optional<SideStream> side = SideStream::forDevice(device);   // none on the CPU
//   auto ready = side->markCurrent();                // this thread's current stream: the work so far
//   ... on any thread:
//   SideStream::Scope scope(*side, *ready);          // current stream = side, after `ready`
//   ... queue work ...
//   side->markDone();                                // the work queued so far on the side stream
//   ... later, on another thread:
//   side->joinCurrent();                             // its current stream waits for that mark
//
// Only the device's own generic stream and event interfaces are used (c10::Stream, c10::Event), so
// this compiles without CUDA; forDevice() returns none for a device that has no streams (the CPU).

#include <memory>
#include <optional>

#include <c10/core/Device.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>

namespace dtbench::trainer {

class SideStream {
 public:
  // A pool stream of `device` when it is a CUDA device; none otherwise.
  static std::optional<SideStream> forDevice(c10::Device device);

  // An event recorded now on the calling thread's current stream of the device.
  std::shared_ptr<c10::Event> markCurrent() const;

  // RAII: the calling thread's current stream of the device is the side stream, which first waits
  // for `after`.
  class Scope {
   public:
    Scope(const SideStream& side, const c10::Event& after);

   private:
    c10::StreamGuard guard_;
  };

  // Host: waits until the work queued on the side stream so far is done (before the host reads a
  // buffer the side stream copies into).
  void synchronize() const { stream_.synchronize(); }
  // Records the side stream's progress so far; joinCurrent() makes the calling thread's current
  // stream wait for the latest mark.
  void markDone();
  void joinCurrent() const;

 private:
  SideStream(c10::Device device, c10::Stream stream);

  c10::Device device_;
  c10::Stream stream_;
  std::shared_ptr<c10::Event> done_;
};

}  // namespace dtbench::trainer
