#include "experiments/report/report_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace dtbench::report {
namespace {

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "";
  if (value == 0) value = 0;  // no "-0.000"
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string s = text;
  if (s.rfind("-0.", 0) == 0 && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

bool numeric(Cell::Kind kind) { return kind != Cell::Kind::kText && kind != Cell::Kind::kEmpty; }

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string markdownField(const std::string& text) {
  std::string escaped;
  for (char c : text) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  return escaped;
}

}  // namespace

std::string formatCell(const Cell& cell, Precision precision) {
  const bool shortForm = precision == Precision::kShort;
  if (shortForm && cell.shortDecimals && (cell.kind == Cell::Kind::kSeconds || cell.kind == Cell::Kind::kRatio ||
                                          cell.kind == Cell::Kind::kRate)) {
    const double unit = std::pow(10.0, -*cell.shortDecimals);
    return fixed(std::round(cell.value / unit) * unit, std::max(0, *cell.shortDecimals));
  }
  switch (cell.kind) {
    case Cell::Kind::kEmpty: return "";
    case Cell::Kind::kText: return cell.text;
    case Cell::Kind::kInteger: return std::to_string(cell.integer);
    case Cell::Kind::kSeconds: return fixed(cell.value, shortForm ? 3 : 6);
    case Cell::Kind::kRatio: return fixed(cell.value, shortForm ? 2 : 4);
    case Cell::Kind::kRate: return fixed(cell.value, shortForm ? 3 : 6);
  }
  return "";
}

std::string renderMarkdown(const std::vector<Table>& tables) {
  std::ostringstream out;
  for (const Table& table : tables) {
    out << "## " << table.title << "\n\n";
    if (table.rows.empty()) {
      out << "(none)\n\n";
    } else {
      // A column is right-aligned when its first non-empty cell is a number.
      std::vector<bool> right(table.columns.size(), false);
      for (size_t c = 0; c < table.columns.size(); ++c)
        for (const auto& row : table.rows)
          if (row[c].kind != Cell::Kind::kEmpty) {
            right[c] = numeric(row[c].kind);
            break;
          }
      out << '|';
      for (const std::string& column : table.columns) out << ' ' << markdownField(column) << " |";
      out << "\n|";
      for (size_t c = 0; c < table.columns.size(); ++c) out << (right[c] ? "---:|" : "---|");
      out << '\n';
      for (const auto& row : table.rows) {
        out << '|';
        for (const Cell& cell : row) out << ' ' << markdownField(formatCell(cell, Precision::kShort)) << " |";
        out << '\n';
      }
      out << '\n';
    }
    for (const std::string& note : table.notes) out << note << '\n';
    if (!table.notes.empty()) out << '\n';
  }
  return out.str();
}

std::string renderCsv(const Table& table) {
  std::ostringstream out;
  for (size_t c = 0; c < table.columns.size(); ++c) out << (c ? "," : "") << csvField(table.columns[c]);
  out << '\n';
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csvField(formatCell(row[c], Precision::kLong));
    out << '\n';
  }
  return out.str();
}

std::string renderCsvAll(const std::vector<Table>& tables) {
  std::string out;
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) out += '\n';
    out += "# " + tables[i].title + '\n' + renderCsv(tables[i]);
  }
  return out;
}

const Table& findTable(const std::vector<Table>& tables, const std::string& name) {
  std::string names;
  for (const Table& t : tables) {
    if (t.name == name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  throw std::out_of_range("no table '" + name + "' (the tables: " + names + ")");
}

nlohmann::json renderJson(const std::vector<Table>& tables) {
  nlohmann::json out = nlohmann::json::array();
  for (const Table& table : tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : table.rows) {
      nlohmann::json values = nlohmann::json::array();
      for (const Cell& cell : row) {
        if (cell.kind == Cell::Kind::kEmpty || (numeric(cell.kind) && cell.kind != Cell::Kind::kInteger &&
                                                !std::isfinite(cell.value)))
          values.push_back(nullptr);
        else if (cell.kind == Cell::Kind::kText)
          values.push_back(cell.text);
        else if (cell.kind == Cell::Kind::kInteger)
          values.push_back(cell.integer);
        else
          values.push_back(std::stod(formatCell(cell, Precision::kLong)));
      }
      rows.push_back(values);
    }
    out.push_back({{"name", table.name},
                   {"title", table.title},
                   {"columns", table.columns},
                   {"rows", rows},
                   {"notes", table.notes}});
  }
  return out;
}

}  // namespace dtbench::report
