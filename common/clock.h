#pragma once
// Unix time in seconds, as run directories, job tables and sweeps record it (float seconds since
// 1970, the wall clock): the one reading of the wall clock every layer shares. Durations are
// measured with std::chrono::steady_clock instead.

namespace dtbench::common {

double unixSeconds();

}  // namespace dtbench::common
