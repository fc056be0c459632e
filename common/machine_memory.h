#pragma once
// The physical memory of the machine this process runs on (sysconf), for refusing by name what could
// never fit in it (a synthetic dataset, an all-reduce buffer) before LibTorch fails to allocate it.

#include <optional>
#include <string>

namespace dtbench::common {

// Bytes of physical memory; nullopt where the system does not say.
std::optional<double> physicalMemoryBytes();

// "23.5 GiB": bytes in GiB for messages.
std::string gibText(double bytes);

}  // namespace dtbench::common
