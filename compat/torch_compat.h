#pragma once
// The differences between LibTorch 1.13 (Debian's libtorch-dev) and 2.x (CUDA builds), in one
// place. Everything else in dtbench is written against the API both versions share.

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

inline constexpr int kTorchMajor = TORCH_VERSION_MAJOR;
inline constexpr int kTorchMinor = TORCH_VERSION_MINOR;

inline const char* torchVersion() { return TORCH_VERSION; }

// Note [zero_grad in place]
// 1.13's Optimizer::zero_grad() zeroes gradients in place; 2.x's zero_grad(set_to_none = true)
// drops them. dtbench always zeroes in place: gradients keep their storage from step to step, so
// allocations stay out of the step and gradient views into communication buckets stay valid.
inline void zeroGradInPlace(torch::optim::Optimizer& optimizer) {
#if TORCH_VERSION_MAJOR >= 2
  optimizer.zero_grad(/*set_to_none=*/false);
#else
  optimizer.zero_grad();
#endif
}

// Note [Gloo options across versions]
// 1.13's ProcessGroupGloo derives from ProcessGroup and its Options from ProcessGroup::Options; 2.x's
// derives from Backend and Backend::Options (so a 2.x ProcessGroupGloo is no c10d::ProcessGroup:
// hold it as its own type). Both have Options::create(timeout), `devices` and `threads`; dtbench
// uses only those. A template, so this header needs no c10d include: GlooGroup is
// c10d::ProcessGroupGloo.
template <typename GlooGroup>
auto makeGlooOptions(std::chrono::milliseconds timeout, int threads) {
  auto options = GlooGroup::Options::create(timeout);
  options->threads = threads;
  return options;
}

// Note [autocast across versions]
// Autocast's state is per thread and per device family: a switch and a lower-precision type.
// 1.13 (and 2.0 to 2.3) name the families in the function: set_cpu_enabled /
// set_autocast_cpu_dtype for the CPU, set_enabled / set_autocast_gpu_dtype for CUDA. 2.4 takes the
// device type as an argument (set_autocast_enabled(device, on), set_autocast_dtype(device, type))
// and deprecates the old calls, which then warn. dtbench needs the CPU and CUDA only.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define DTBENCH_AUTOCAST_TAKES_DEVICE 1
#else
#define DTBENCH_AUTOCAST_TAKES_DEVICE 0
#endif

inline void requireAutocastDevice(c10::DeviceType device) {
  if (device != c10::DeviceType::CPU && device != c10::DeviceType::CUDA)
    throw std::invalid_argument("autocast: dtbench supports the CPU and CUDA, not " + c10::DeviceTypeName(device));
}

inline bool autocastEnabled(c10::DeviceType device) {
  requireAutocastDevice(device);
#if DTBENCH_AUTOCAST_TAKES_DEVICE
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

inline void setAutocastEnabled(c10::DeviceType device, bool enabled) {
  requireAutocastDevice(device);
#if DTBENCH_AUTOCAST_TAKES_DEVICE
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CPU) at::autocast::set_cpu_enabled(enabled);
  else at::autocast::set_enabled(enabled);
#endif
}

inline at::ScalarType autocastDtype(c10::DeviceType device) {
  requireAutocastDevice(device);
#if DTBENCH_AUTOCAST_TAKES_DEVICE
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void setAutocastDtype(c10::DeviceType device, at::ScalarType dtype) {
  requireAutocastDevice(device);
#if DTBENCH_AUTOCAST_TAKES_DEVICE
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CPU) at::autocast::set_autocast_cpu_dtype(dtype);
  else at::autocast::set_autocast_gpu_dtype(dtype);
#endif
}

// Note [One intra-op thread off the training thread]
// at::set_num_threads(n) on the training thread does two things in an OpenMP build of LibTorch
// (Debian's 1.13, and the Linux wheels of 2.x): it sets that thread's OpenMP team size, and it
// stores n as the value every *other* thread adopts the first time it runs a parallel ATen op. A
// helper thread (a loader worker building batches, the communication thread packing buckets)
// therefore gets its own OpenMP team of n threads: on a machine with n cores that is more threads
// than cores, and libgomp then stops letting idle team threads spin between parallel regions, for
// the training thread's team too, so each of the thousands of small parallel regions of a step
// pays a wake-up (measured on 2 cores: --workers 2 cost MobileNetV2 13% of its compute, and
// nothing with this call; docs/benchmarks.md, "Loader workers and the training thread's cores"). Helper threads call useOneIntraOpThread() first: it lets
// ATen adopt its value for this thread, then sets this thread's OpenMP team to 1, so their ops
// run on the thread itself and no team is ever created. omp_set_num_threads is looked up at run
// time because the OpenMP runtime is LibTorch's dependency, not dtbench's (2.x wheels ship their
// own copy; linking the system's would set the wrong one). In a build with LibTorch's native
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
