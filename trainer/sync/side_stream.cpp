#include "trainer/sync/side_stream.h"

#include <c10/core/impl/VirtualGuardImpl.h>

namespace dtbench::trainer {

namespace {

c10::Device withIndex(c10::Device device) {
  if (device.has_index()) return device;
  return c10::impl::VirtualGuardImpl(device.type()).getDevice();
}

}  // namespace

std::optional<SideStream> SideStream::forDevice(c10::Device device) {
  if (!device.is_cuda()) return std::nullopt;
  device = withIndex(device);
  const c10::impl::VirtualGuardImpl impl(device.type());
  return SideStream(device, impl.getStreamFromGlobalPool(device, /*isHighPriority=*/false));
}

SideStream::SideStream(c10::Device device, c10::Stream stream)
    : device_(device), stream_(stream), done_(std::make_shared<c10::Event>(device.type())) {}

std::shared_ptr<c10::Event> SideStream::markCurrent() const {
  auto event = std::make_shared<c10::Event>(device_.type());
  event->record(c10::impl::VirtualGuardImpl(device_.type()).getStream(device_));
  return event;
}

SideStream::Scope::Scope(const SideStream& side, const c10::Event& after) : guard_(side.stream_) {
  after.block(side.stream_);
}

void SideStream::markDone() { done_->record(stream_); }

void SideStream::joinCurrent() const {
  if (done_->was_marked_for_recording()) done_->block(c10::impl::VirtualGuardImpl(device_.type()).getStream(device_));
}

}  // namespace dtbench::trainer
