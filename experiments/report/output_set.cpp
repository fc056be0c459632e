#include "experiments/report/output_set.h"

#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/file_names.h"

namespace dtbench::report {
namespace fs = std::filesystem;
OutputSet::OutputSet(std::string directory) : directory_(std::move(directory)) {}

void OutputSet::add(const std::string& path) {
  std::error_code error;
  const fs::path file(path);
  const fs::path parent = file.has_parent_path() ? file.parent_path() : fs::path(directory_);
  if (fs::equivalent(parent, directory_, error)) names_.insert(file.filename().string());
}

void OutputSet::commit() {
  const fs::path list = fs::path(directory_) / kListName;
  std::ifstream in(list);
  const nlohmann::json previous = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (previous.is_object() && previous.contains("files") && previous["files"].is_array())
    for (const nlohmann::json& name : previous["files"]) {
      if (!name.is_string() || !common::isPlainFileName(name.get<std::string>()) || names_.count(name.get<std::string>())) continue;
      std::error_code error;
      const fs::path stale = fs::path(directory_) / name.get<std::string>();
      if (fs::is_regular_file(fs::symlink_status(stale, error))) fs::remove(stale, error);
    }
  const nlohmann::json current = {{"files", std::vector<std::string>(names_.begin(), names_.end())}};
  common::writeFileAtomically(list.string(), [&](std::ostream& out) { out << current.dump(1) << '\n'; });
}

}  // namespace dtbench::report
