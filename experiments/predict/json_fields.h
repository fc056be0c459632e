#pragma once
// JsonFields: the checks of one JSON file that a person wrote for `dtbench predict` (a hardware file,
// a step description), each failure a common::UsageError that names the file, the field and the
// section of docs/predict.md that defines it. readInputFile reads such a file strictly
// (common/strict_json.h: no key twice, nothing after the value).

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::predict {

class JsonFields {
 public:
  // `source` names the file in every message; `section` is the docs/predict.md section, e.g. "The hardware file".
  JsonFields(std::string source, std::string section) : source_(std::move(source)), section_(std::move(section)) {}

  [[noreturn]] void fail(const std::string& what) const;
  // Refuses any key of `object` outside `allowed`; `where` prefixes the names ("intra_node.").
  void onlyKeys(const nlohmann::json& object, const std::set<std::string>& allowed, const std::string& where) const;
  // A finite number >= 0 (zeroAllowed) or > 0, and at most `most` (a figure beyond it is a typo, and in
  // the model's arithmetic it would overflow to infinity); `key` must be present.
  double number(const nlohmann::json& object, const std::string& key, const std::string& where, bool zeroAllowed,
                double most = 1e15) const;
  // A whole number in [least, most]; `key` must be present.
  int64_t whole(const nlohmann::json& object, const std::string& key, const std::string& where, int64_t least,
                int64_t most) const;
  std::string text(const nlohmann::json& object, const std::string& key, const std::string& where) const;
  bool flag(const nlohmann::json& object, const std::string& key, const std::string& where) const;

 private:
  std::string source_, section_;
};

// The JSON value of the file at `path`, read strictly; `flag` names where it was given ("--hardware").
// Throws common::UsageError when it cannot be read or parsed.
nlohmann::json readInputFile(const std::string& path, const std::string& flag);

}  // namespace dtbench::predict
