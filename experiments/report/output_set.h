#pragma once
// OutputSet: the files one report writes into an output directory (report's --csv-dir and --plots,
// predict's --plots), replaced as a set. The directory's `.dtbench-outputs.json` lists the files the
// last report wrote there; commit() removes those of them this report did not write (a table or a
// figure the new report no longer has, which would otherwise sit beside the new ones as if it were
// current), then lists this report's files. A file the list does not name is never touched, so a
// directory shared with other files keeps them.
//
// Contract
//   add(path)   a file this report wrote into the directory (by its name; a path elsewhere is ignored).
//   commit()    removes the previous list's files that were not added (plain names only, regular
//               files only) and writes the new list atomically; throws std::runtime_error naming the
//               list when it cannot be written. A list that is not readable JSON is taken as empty.

#include <set>
#include <string>

namespace dtbench::report {

class OutputSet {
 public:
  explicit OutputSet(std::string directory);
  void add(const std::string& path);
  void commit();

  static constexpr const char* kListName = ".dtbench-outputs.json";

 private:
  std::string directory_;
  std::set<std::string> names_;
};

}  // namespace dtbench::report
