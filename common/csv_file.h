#pragma once
// CsvFile: a CSV file of the run directory (docs/run-directory.md) read as a header and rows of
// fields, with typed access by column name. The run directory's CSV files hold plain fields (no
// quoting is needed for what dtbench writes); a quoted field is still read correctly, and a UTF-8
// byte order mark (which spreadsheet programs write) is skipped. Every error names the file, the line
// and the column, so a hand-edited or truncated file says what to fix.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dtbench::common {

class CsvFile {
 public:
  // Reads `path`. Throws std::runtime_error when it cannot be opened, is not a regular file (see
  // regular_file.h), is empty, or a row has a different number of fields than the header (a
  // truncated last line is reported as such).
  static CsvFile read(const std::string& path);

  const std::string& path() const { return path_; }
  size_t rows() const { return rows_.size(); }
  bool hasColumn(const std::string& name) const;
  // The column's index; throws naming the file and the columns it has when `name` is missing.
  size_t column(const std::string& name) const;

  const std::string& text(size_t row, size_t column) const { return rows_[row][column]; }
  // Throws naming file, line and column when the field is not a number (empty -> NaN for number()).
  double number(size_t row, size_t column) const;
  int64_t integer(size_t row, size_t column) const;
  // The line of the file `row` was read from (1 is the header; empty lines are skipped).
  size_t line(size_t row) const { return lines_[row]; }
  // Throws std::runtime_error "<path> line L column '<name>': <what>", for checks of a field's value.
  [[noreturn]] void fail(size_t row, size_t column, const std::string& what) const;

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> lines_;  // per row
};

}  // namespace dtbench::common
