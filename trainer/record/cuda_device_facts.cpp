// describeCudaDevice (trainer/record/device_facts.h): a GPU's identity from the CUDA runtime that
// LibTorch loads. The SMs' peak clock is asked as an attribute (cudaDeviceProp lost its clockRate in
// CUDA 13); versions are encoded as 1000 × major + 10 × minor (13000 = 13.0).

#include <string>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime_api.h>

#include "trainer/record/device_facts.h"
#include "trainer/record/peak_memory.h"

namespace dtbench::trainer {
namespace {

std::string cudaFactsVersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

void describeCudaDevice(int index, run::DeviceFacts& facts) {
  cudaDeviceProp properties{};
  C10_CUDA_CHECK(cudaGetDeviceProperties(&properties, index));
  facts.index = index;
  facts.model = properties.name;
  facts.smCount = properties.multiProcessorCount;
  facts.memoryBytes = static_cast<int64_t>(properties.totalGlobalMem);
  facts.computeCapability = std::to_string(properties.major) + "." + std::to_string(properties.minor);
  int kilohertz = 0;
  if (cudaDeviceGetAttribute(&kilohertz, cudaDevAttrClockRate, index) == cudaSuccess && kilohertz > 0)
    facts.clockMhz = kilohertz / 1000.0;
  int version = 0;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0) facts.driverVersion = cudaFactsVersionText(version);
  if (cudaRuntimeGetVersion(&version) == cudaSuccess && version > 0) facts.cudaRuntimeVersion = cudaFactsVersionText(version);
  (void)cudaGetLastError();  // an attribute this driver lacks leaves no error behind
}

// The allocator's statistics: element 0 of each array is the aggregate over pool types (StatType::AGGREGATE
// in every LibTorch from 2.4 on, whose namespaces differ).
int64_t cudaPeakAllocatedBytes(int index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  return stats.allocated_bytes[0].peak;
}

}  // namespace dtbench::trainer
