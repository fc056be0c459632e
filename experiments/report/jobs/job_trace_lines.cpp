#include "experiments/report/jobs/job_trace_lines.h"

#include <stdexcept>
#include <utility>

#include "experiments/report/regular_file.h"

namespace dtbench::report {

JobTraceLines::JobTraceLines(const std::string& path) : path_(path), in_(openRegularFile(path)) {}

bool JobTraceLines::next(std::string& line) {
  while (std::getline(in_, line)) {
    ++number_;
    cut_ = in_.eof();
    if (number_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) return true;
  }
  return false;
}

void JobTraceLines::fail(const std::string& what) const {
  throw std::runtime_error(path_ + " line " + std::to_string(number_) + ": " + what +
                           (cut_ ? " (the last line has no newline: the file is truncated)" : ""));
}

}  // namespace dtbench::report
