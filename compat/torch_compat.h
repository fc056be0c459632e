#pragma once
// The LibTorch details dtbench depends on that need care, in one place: which version this is,
// gradients zeroed in place, autocast's per-device state, and one intra-op thread on helper threads.
// dtbench builds against LibTorch 2.4 or newer (cmake/Torch.cmake); everything else in dtbench is
// written against LibTorch's public C++ API.

#include <chrono>
#include <stdexcept>
#include <string>

#include <ATen/Config.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#if AT_PARALLEL_OPENMP
#include <dlfcn.h>
#endif

namespace dtbench::compat {


inline const char* torchVersion() { return TORCH_VERSION; }

// Note [zero_grad in place]
// LibTorch's Optimizer::zero_grad() sets gradients to none by default (set_to_none = true). dtbench
// always zeroes in place: gradients keep their storage from step to step, so allocations stay out
// of the step and gradient views into communication buckets stay valid.
inline void zeroGradInPlace(torch::optim::Optimizer& optimizer) { optimizer.zero_grad(/*set_to_none=*/false); }

// Note [autocast per device]
// Autocast's state is per thread and per device family: a switch and a lower-precision type, both
// taking the device type (LibTorch 2.4 and newer; the older per-family calls are deprecated and
// warn). dtbench needs the CPU and CUDA only.
inline void requireAutocastDevice(c10::DeviceType device) {
  if (device != c10::DeviceType::CPU && device != c10::DeviceType::CUDA)
    throw std::invalid_argument("autocast: dtbench supports the CPU and CUDA, not " + c10::DeviceTypeName(device));
}

inline bool autocastEnabled(c10::DeviceType device) {
  requireAutocastDevice(device);
  return at::autocast::is_autocast_enabled(device);
}

inline void setAutocastEnabled(c10::DeviceType device, bool enabled) {
  requireAutocastDevice(device);
  at::autocast::set_autocast_enabled(device, enabled);
}

inline at::ScalarType autocastDtype(c10::DeviceType device) {
  requireAutocastDevice(device);
  return at::autocast::get_autocast_dtype(device);
}

inline void setAutocastDtype(c10::DeviceType device, at::ScalarType dtype) {
  requireAutocastDevice(device);
  at::autocast::set_autocast_dtype(device, dtype);
}

// Note [One intra-op thread off the training thread]
// at::set_num_threads(n) on the training thread does two things in an OpenMP build of LibTorch
// (PyTorch's Linux wheels): it sets that thread's OpenMP team size, and it
// stores n as the value every *other* thread adopts the first time it runs a parallel ATen op. A
// helper thread (a loader worker building batches, the communication thread packing buckets)
// therefore gets its own OpenMP team of n threads: on a machine with n cores that is more threads
// than cores, and libgomp then stops letting idle team threads spin between parallel regions, for
// the training thread's team too, so each of the thousands of small parallel regions of a step
// pays a wake-up (measured on 2 cores: --workers 2 cost MobileNetV2 13% of its compute, and
// nothing with this call; docs/benchmarks-history.md, "Loader workers and the training thread's cores"). Helper threads call useOneIntraOpThread() first: it lets
// ATen adopt its value for this thread, then sets this thread's OpenMP team to 1, so their ops
// run on the thread itself and no team is ever created. omp_set_num_threads is looked up at run
// time because the OpenMP runtime is LibTorch's dependency, not dtbench's (2.x wheels ship their
// own copy, libgomp; linking the system's would set the wrong one). In a build with LibTorch's native
// thread pool (AT_PARALLEL_NATIVE) there are no per-thread teams: helper threads' ops share the
// one intra-op pool and there is nothing to set. at::get_num_threads() on the helper thread
// reports the result.
inline void useOneIntraOpThread() {
#if AT_PARALLEL_OPENMP
  (void)at::get_num_threads();  // ATen's per-thread initialisation happens now, not at the next op
  using SetThreads = void (*)(int);
  static const auto setThreads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (setThreads == nullptr)
    throw std::runtime_error("LibTorch is built with OpenMP but omp_set_num_threads is not loaded");
  setThreads(1);
#endif
}

}  // namespace dtbench::compat
