#pragma once
// SideStream: the communication thread's own stream on the gradients' GPU (docs/gpu.md,
// "Communication off the compute stream").
//
// Without it, the communication thread queues a bucket's copies on the device's default stream,
// the one backward runs on: they start only once every backward kernel queued before them is done,
// so a bucket made ready early in backward waits for most of the rest of it. On a side stream,
// ordered by an event recorded the moment the bucket's last gradient was accumulated, the copies and
// the collective (NCCL orders its own stream after the current one) wait for exactly the work they
// need; the compute stream waits for the side stream once, after backward, before the optimizer
// reads the averaged gradients.
//
//   std::optional<SideStream> side = SideStream::forDevice(device);   // none on the CPU
//   auto ready = side->markCurrent();                // autograd's thread: the gradients so far
//   ... on the communication thread:
//   SideStream::Scope scope(*side, *ready);          // current stream = side, after `ready`
//   ... copies, the collective, the copies back ...
//   side->markDone();                                // the work queued so far on the side stream
//   ... on the training thread, after the communication thread drained:
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
