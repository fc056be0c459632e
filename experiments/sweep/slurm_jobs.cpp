#include "experiments/sweep/slurm_jobs.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <sstream>

#include "common/usage_error.h"

namespace dtbench::sweep {

std::vector<std::string> splitWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else word += c;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
      else if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) word += text[++i];
      else word += c;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord) words.push_back(word);
      word.clear();
      inWord = false;
    } else {
      inWord = true;
      if (c == '\'' || c == '"') quote = c;
      else if (c == '\\' && i + 1 < text.size()) word += text[++i];
      else word += c;
    }
  }
  if (quote != 0)
    throw common::UsageError(std::string("--sbatch-args has an unclosed ") + quote + " quote: " + text);
  if (inWord) words.push_back(word);
  return words;
}

std::string parsableJobId(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::string id = line.substr(0, line.find(';'));
    if (!id.empty() && id.find_first_not_of("0123456789_") == std::string::npos) return id;
  }
  return "";
}

std::map<std::string, std::string> parseSqueue(const std::string& output) {
  std::map<std::string, std::string> states;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const size_t comma = line.find(',');
    if (comma == std::string::npos || comma == 0) continue;
    std::string state = line.substr(comma + 1);
    while (!state.empty() && (state.back() == ' ' || state.back() == '\r')) state.pop_back();
    states[line.substr(0, comma)] = state;
  }
  return states;
}

bool jobHasEnded(const std::string& state) {
  static const std::set<std::string> kEnded = {"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",
                                               "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
                                               "PREEMPTED", "SPECIAL_EXIT",  "REVOKED"};
  return kEnded.count(state) > 0;
}

std::string scontrolField(const std::string& output, const std::string& field) {
  const std::string key = field + "=";
  for (size_t at = output.find(key); at != std::string::npos; at = output.find(key, at + 1)) {
    if (at != 0 && output[at - 1] != ' ' && output[at - 1] != '\n') continue;
    const size_t start = at + key.size();
    return output.substr(start, output.find_first_of(" \n", start) - start);
  }
  return "";
}

std::string clientMessage(std::string text) {
  constexpr size_t kLength = 400;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > kLength) text = text.substr(0, kLength) + "...";
  return text;
}

}  // namespace dtbench::sweep
