#pragma once
// The kernel's out-of-memory kills in this process's cgroup: the killer counts every process it kills in
// the cgroup's "oom_kill" counter, so a child that ended by SIGKILL while the counter rose was ended by
// it (dtbench launch names such a rank; the sweep does not retry such a point with the same settings).
//
// Contract:
//  - memoryEventsFile(): the file of this process's cgroup that holds the "oom_kill N" line, from
//    /proc/self/cgroup: cgroup v2's memory.events under /sys/fs/cgroup (or /sys/fs/cgroup/unified on
//    a hybrid host), else cgroup v1's memory.oom_control under /sys/fs/cgroup/memory; "" when there
//    is none to read (no memory controller, or a root cgroup without the file).
//  - oomKills(file): the counter in that file; nullopt when the file or its line cannot be read.

#include <optional>
#include <string>

namespace dtbench::common {

std::string memoryEventsFile();

std::optional<long long> oomKills(const std::string& file);

}  // namespace dtbench::common
