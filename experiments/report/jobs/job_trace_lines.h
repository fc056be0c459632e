#pragma once
// JobTraceLines: a job trace file read one line at a time (a trace of millions of jobs is never held
// whole), with the line number every error names. A UTF-8 byte order mark and a '\r' before the
// newline are dropped. A file whose last line has no newline was cut short when written or copied:
// an error on that line says so.

#include <cstddef>
#include <fstream>
#include <string>

namespace dtbench::report {

class JobTraceLines {
 public:
  // Opens `path` (a regular file, see regular_file.h). Throws std::runtime_error naming the path.
  explicit JobTraceLines(const std::string& path);

  // The next line into `line` (empty lines skipped); false at the end of the file.
  bool next(std::string& line);
  size_t number() const { return number_; }  // the line last returned, 1 = the first
  const std::string& path() const { return path_; }

  // Throws std::runtime_error "<path> line L: <what>", adding that the file is truncated when the
  // line is the last one and has no newline.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string path_;
  std::ifstream in_;
  size_t number_ = 0;
  bool cut_ = false;  // the line last returned ended at the end of the file without a newline
};

// `text` as it can be shown on a terminal: control characters and bytes that are not UTF-8 as \xNN,
// cut after `longest` bytes ("..." added): a binary file's first "line" can be megabytes. fail()
// shows its message so.
std::string printable(const std::string& text, size_t longest = std::string::npos);

}  // namespace dtbench::report
