#pragma once
// JobClock: the time stamps of job traces as Unix seconds. sacct prints `YYYY-MM-DDTHH:MM:SS` in
// the local time zone (`Unknown` or `None` when the job has not started or ended); the Helios layout
// writes `YYYY-MM-DD HH:MM:SS` (the cluster's local time) or Unix seconds. Local times are read in
// the process's time zone (set TZ to the cluster's when they differ); durations and queueing delays
// are differences, so only a daylight-saving change between two stamps depends on it. The offset
// from UTC is looked up once per hour of wall-clock time seen (mktime), so a million stamps cost
// little more than their parsing.

#include <cmath>
#include <cstdint>
#include <string>

namespace dtbench::report {

class JobClock {
 public:
  // Unix seconds of `text`; NaN for an empty field, `Unknown`, `None`, `NaN` or `NaT` (no time).
  // Returns false when `text` is neither a time nor Unix seconds from 0 to the end of the year 9999.
  bool parse(const std::string& text, double* seconds);

 private:
  int64_t hour_ = INT64_MIN;  // the local hour (naive seconds / 3600) whose offset is cached
  int64_t offset_ = 0;        // local − UTC seconds in that hour
};

}  // namespace dtbench::report
