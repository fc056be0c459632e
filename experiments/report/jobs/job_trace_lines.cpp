#include "experiments/report/jobs/job_trace_lines.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "common/regular_file.h"

namespace dtbench::report {
using common::openRegularFile;

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

namespace {

// Length of the valid UTF-8 sequence at text[at] (0 when it is none).
size_t utf8Length(const std::string& text, size_t at) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(at);
  const size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead < 0xE0 ? 2 : 0;
  if (length == 0 || at + length > text.size()) return 0;
  for (size_t k = at + 1; k < at + length; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 0;
  return length;
}

}  // namespace

std::string printable(const std::string& text, size_t longest) {
  std::string out;
  for (size_t at = 0; at < text.size() && out.size() < longest;) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c >= 0x20 && c < 0x7F) {
      out += text[at++];
    } else if (const size_t n = c >= 0x80 ? utf8Length(text, at) : 0; n > 0) {
      out += text.substr(at, n);
      at += n;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
      out += escaped;
      ++at;
    }
  }
  if (out.size() >= longest) out += "...";
  return out;
}

void JobTraceLines::fail(const std::string& what) const {
  throw std::runtime_error(path_ + " line " + std::to_string(number_) + ": " + printable(what) +
                           (cut_ ? " (the last line has no newline: the file is truncated)" : ""));
}

}  // namespace dtbench::report
