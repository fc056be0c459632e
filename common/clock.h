#pragma once
// Unix time in seconds, as run directories, job tables and sweeps record it (float seconds since
// 1970, the wall clock): the one reading of the wall clock every layer shares. Durations are
// measured with std::chrono::steady_clock instead.

#include <string>

namespace dtbench::common {

double unixSeconds();

// "2026-11-28T06:50:46Z": Unix seconds as an ISO 8601 UTC time, to the second, for tables people read;
// "" for a time that is not finite.
std::string utcText(double unixSeconds);

}  // namespace dtbench::common
