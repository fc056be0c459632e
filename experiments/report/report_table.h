#pragma once
// Table: one section of dtbench report as data (title, columns, rows of typed cells, notes), and
// its renderings: Markdown, CSV and JSON (docs/report.md, "Formats"). A cell's kind fixes how it is
// printed, so every table rounds the same way: seconds 3 decimals (6 in CSV/JSON), ratios 2 (4),
// GB/s 3 (6), integers as they are.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::report {

struct Cell {
  enum class Kind { kEmpty, kText, kInteger, kSeconds, kRatio, kRate };
  Kind kind = Kind::kEmpty;
  std::string text;
  double value = 0;
  int64_t integer = 0;
  // Markdown only: the decimals the value supports (an estimate's interval; negative: tens, hundreds),
  // instead of its kind's; CSV and JSON keep the value whole.
  std::optional<int> shortDecimals;

  static Cell empty() { return {}; }
  static Cell of(std::string text) { return {Kind::kText, std::move(text), 0, 0, std::nullopt}; }
  static Cell integral(int64_t v) { return {Kind::kInteger, "", 0, v, std::nullopt}; }
  static Cell seconds(double v) { return {Kind::kSeconds, "", v, 0, std::nullopt}; }
  static Cell ratio(double v) { return {Kind::kRatio, "", v, 0, std::nullopt}; }
  static Cell rate(double v) { return {Kind::kRate, "", v, 0, std::nullopt}; }  // GB/s
  Cell roundedTo(int decimals) const {
    Cell c = *this;
    c.shortDecimals = decimals;
    return c;
  }
};

struct Table {
  std::string name;   // file stem of --csv-dir and key in JSON, e.g. "time_speedup"
  std::string title;  // e.g. "Table 1 — time and speedup"
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;  // definitions and remarks printed under the table
};

enum class Precision { kShort, kLong };  // Markdown | CSV and JSON

std::string formatCell(const Cell& cell, Precision precision);

// The table of `tables` named `name`; throws std::out_of_range "no table 'x' (the tables: a, b)".
const Table& findTable(const std::vector<Table>& tables, const std::string& name);

std::string renderMarkdown(const std::vector<Table>& tables);
std::string renderCsv(const Table& table);                   // header and rows only
std::string renderCsvAll(const std::vector<Table>& tables);  // "# title" line before each
nlohmann::json renderJson(const std::vector<Table>& tables);

}  // namespace dtbench::report
