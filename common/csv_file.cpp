#include "common/whole_number.h"
#include "common/csv_file.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/regular_file.h"

namespace dtbench::common {
namespace {

constexpr char kUtf8ByteOrderMark[] = "\xEF\xBB\xBF";

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace

CsvFile CsvFile::read(const std::string& path) {
  std::ifstream in = openRegularFile(path);
  CsvFile file;
  file.path_ = path;
  std::string line;
  const bool hasLine = static_cast<bool>(std::getline(in, line));
  if (line.rfind(kUtf8ByteOrderMark, 0) == 0) line.erase(0, sizeof kUtf8ByteOrderMark - 1);
  if (!hasLine || line.empty() || line == "\r") throw std::runtime_error(path + " is empty (no header line)");
  file.header_ = splitFields(line);
  size_t lineNumber = 1;
  while (std::getline(in, line)) {
    ++lineNumber;
    if (line.empty()) continue;
    std::vector<std::string> fields = splitFields(line);
    if (fields.size() != file.header_.size())
      throw std::runtime_error(path + " line " + std::to_string(lineNumber) + " has " + std::to_string(fields.size()) +
                               " fields, the header has " + std::to_string(file.header_.size()) +
                               (in.peek() == EOF ? " (a truncated last line?)" : ""));
    file.rows_.push_back(std::move(fields));
    file.lines_.push_back(lineNumber);
  }
  return file;
}

bool CsvFile::hasColumn(const std::string& name) const {
  for (const std::string& h : header_)
    if (h == name) return true;
  return false;
}

size_t CsvFile::column(const std::string& name) const {
  for (size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  std::string have;
  for (const std::string& h : header_) have += (have.empty() ? "" : ",") + h;
  throw std::runtime_error(path_ + " has no column '" + name + "' (it has " + have + ")");
}

double CsvFile::number(size_t row, size_t column) const {
  const std::string& field = rows_.at(row).at(column);
  if (field.empty()) return std::nan("");
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != field.size()) fail(row, column, "'" + field + "' is not a number");
  return value;
}

int64_t CsvFile::integer(size_t row, size_t column) const {
  const std::string& field = rows_.at(row).at(column);
  const std::optional<long long> value = wholeNumber(field);
  if (!value) fail(row, column, "'" + field + "' is not an integer");
  return *value;
}

void CsvFile::fail(size_t row, size_t column, const std::string& what) const {
  throw std::runtime_error(path_ + " line " + std::to_string(lines_.at(row)) + " column '" + header_.at(column) +
                           "': " + what);
}

}  // namespace dtbench::common
