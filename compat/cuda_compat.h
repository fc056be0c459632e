#pragma once
// The LibTorch details of CUDA builds that moved between releases (compat/torch_compat.h has the rest);
// included by the CUDA-only files alone (trainer/step/cuda_phase_events.cpp).
//
// CudaEvent: a timing CUDA event created lazily at its first record. LibTorch 2.8 has it in ATen
// (at::cuda::CUDAEvent, <ATen/cuda/CUDAEvent.h>), 2.11 in c10 (c10::cuda::CUDAEvent,
// <c10/cuda/CUDAEvent.h>, which ATen's header then only includes); the class's interface (flags,
// record, query, elapsed_time) is the same in both.

#if __has_include(<c10/cuda/CUDAEvent.h>)
#include <c10/cuda/CUDAEvent.h>
namespace dtbench::compat {
using CudaEvent = c10::cuda::CUDAEvent;
}  // namespace dtbench::compat
#else
#include <ATen/cuda/CUDAEvent.h>
namespace dtbench::compat {
using CudaEvent = at::cuda::CUDAEvent;
}  // namespace dtbench::compat
#endif
