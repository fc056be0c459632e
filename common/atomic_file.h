#pragma once
// writeFileAtomically: a file written through `<path>.tmp` and a rename, so that a reader (the report,
// a resumed run, another rank) never sees half of it: the run directory's JSON files, the trace,
// the message log and a sweep's accounting.
//
// Contract: `body` writes the whole content to the stream. When writing fails (a full disk, a
// directory that is gone) the temporary is removed and std::runtime_error names it, with the
// system's reason; when the rename fails, it names both paths. An existing `path` is replaced only
// by a complete file.

#include <functional>
#include <ostream>
#include <string>

namespace dtbench::common {

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& body);

}  // namespace dtbench::common
