#pragma once
// describeDevice: the device this rank trains on and the machine it shares, as config.json's
// "devices" records it (run/run_facts.h, DeviceFacts): a GPU's name, SM count, memory, clock,
// compute capability, driver and CUDA runtime (cudaDeviceProp and the driver's and runtime's
// versions), or the CPU's model name and the cores the rank may use; its host and the host's boot id,
// which tells ranks and runs that shared one machine (the report flags runs that overlapped on one).
// The CPU's model comes from /proc/cpuinfo (cpuModelName); a machine that names none reads "unknown".

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "run/run_facts.h"
#include "trainer/world.h"

namespace dtbench::trainer {

run::DeviceFacts describeDevice(c10::Device device);

// Collective with a world: every rank's describeDevice, in rank order (one entry without a world).
std::vector<run::DeviceFacts> describeDevices(c10::Device device, World* world);

// The CPU's model in /proc/cpuinfo's text `cpuinfo`: the first "model name" (x86), else "Model"
// (some ARM boards), else "" (the caller says "unknown").
std::string cpuModelName(const std::string& cpuinfo);

// The GPU's part of `facts` (CUDA builds: trainer/record/cuda_device_facts.cpp). Throws
// std::runtime_error in a build whose LibTorch has no CUDA.
void describeCudaDevice(int index, run::DeviceFacts& facts);

}  // namespace dtbench::trainer
