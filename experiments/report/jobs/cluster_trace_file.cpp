#include "experiments/report/jobs/cluster_trace_file.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/report/jobs/job_trace_lines.h"
#include "experiments/report/jobs/job_clock.h"

namespace dtbench::report {
namespace {

const char* const kHeliosColumns[] = {"job_id",      "user",       "gpu_num",  "cpu_num",  "node_num", "state",
                                      "submit_time", "start_time", "end_time", "duration", "queue"};
const char* const kRequired[] = {"job_id", "gpu_num", "state", "submit_time", "start_time", "end_time"};
constexpr size_t kNone = static_cast<size_t>(-1);

void splitCsvFields(const std::string& line, std::vector<std::string>& fields) {
  size_t n = 0;
  bool quoted = false;
  auto field = [&]() -> std::string& {
    if (fields.size() <= n) fields.emplace_back();
    return fields[n];
  };
  field().clear();
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      ++n;
      field().clear();
    } else {
      field() += c;
    }
  }
  fields.resize(n + 1);
}

}  // namespace

TraceColumnMap parseTraceColumnMap(const std::string& text) {
  TraceColumnMap map;
  size_t from = 0;
  while (from < text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(from, comma - from);
    from = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument("--trace-columns: '" + item +
                                  "' is not HELIOS_NAME=FILE_NAME, e.g. gpu_num=num_gpus");
    const std::string ours = item.substr(0, eq);
    bool known = false;
    for (const char* c : kHeliosColumns) known = known || ours == c;
    if (!known)
      throw std::invalid_argument(
          "--trace-columns: '" + ours +
          "' is not a column of the Helios layout (job_id, user, "
          "gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time, duration, queue)");
    map[ours] = item.substr(eq + 1);
  }
  return map;
}

JobTrace readTrace(const std::string& path, const TraceColumnMap& columns) {
  JobTraceLines lines(path);
  JobTrace trace;
  trace.path = path;
  trace.kind = "trace";
  std::string line;
  if (!lines.next(line)) throw std::runtime_error(path + " is empty: expected a header naming the Helios columns");
  std::vector<std::string> header, f;
  splitCsvFields(line, header);
  auto fileName = [&](const std::string& ours) {
    auto it = columns.find(ours);
    return it == columns.end() ? ours : it->second;
  };
  auto find = [&](const std::string& ours) {
    const std::string name = fileName(ours);
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return kNone;
  };
  for (const char* required : kRequired)
    if (find(required) == kNone)
      lines.fail("the header has no column '" + fileName(required) + "'" +
                 (fileName(required) != required ? std::string(" (") + required + ")" : std::string()) + "; it has " +
                 printable(line, 200) +
                 " (the Helios layout: job_id,user,gpu_num,cpu_num,node_num,state,submit_time,"
                 "start_time,end_time,duration,queue; map other names with --trace-columns)");
  const size_t gpuCol = find("gpu_num"), stateCol = find("state"), durationCol = find("duration");
  const size_t timeCols[3] = {find("submit_time"), find("start_time"), find("end_time")};
  auto named = [&](size_t column) { return "column '" + header[column] + "': '" + f[column] + "'"; };
  JobClock clock;
  JobRecord job;
  while (lines.next(line)) {
    splitCsvFields(line, f);
    if (f.size() != header.size())
      lines.fail("has " + std::to_string(f.size()) + " fields, the header has " + std::to_string(header.size()));
    ++trace.rows;
    double times[3];
    for (int k = 0; k < 3; ++k)
      if (!clock.parse(f[timeCols[k]], &times[k]))
        lines.fail(named(timeCols[k]) + " is not a time (YYYY-MM-DD HH:MM:SS or Unix seconds)");
    char* end = nullptr;
    const std::string& g = f[gpuCol];
    const double gpus = std::strtod(g.c_str(), &end);
    if (g.empty() || end != g.c_str() + g.size() || !std::isfinite(gpus))
      lines.fail(named(gpuCol) + " is not a number");
    if (gpus < 0) lines.fail(named(gpuCol) + ": negative GPUs");
    if (gpus != std::floor(gpus) || gpus > 1e9) lines.fail(named(gpuCol) + " is not a whole number of GPUs");
    double duration = std::nan("");
    if (durationCol != kNone && !f[durationCol].empty()) {
      const std::string& d = f[durationCol];
      duration = std::strtod(d.c_str(), &end);
      if (end != d.c_str() + d.size() || !std::isfinite(duration)) lines.fail(named(durationCol) + " is not seconds");
    } else if (!std::isnan(times[1]) && !std::isnan(times[2])) {
      duration = times[2] - times[1];
    }
    if (duration < 0)
      lines.fail((durationCol != kNone && !f[durationCol].empty() ? named(durationCol) + ": a"
                                                                  : std::string("end_time before "
                                                                                "start_time: a")) +
                 " negative duration");
    job.line = static_cast<int64_t>(lines.number());
    job.rawState = f[stateCol];
    job.state = normaliseState(f[stateCol]);
    job.gpus = static_cast<int32_t>(gpus);
    job.submitS = times[0];
    job.startS = times[1];
    job.endS = times[2];
    job.durationS = std::isnan(duration) ? 0 : duration;
    job.gpuSeconds = gpus * job.durationS;
    job.attempts = 1;
    if (std::isnan(duration) && isFinal(job.state) && !std::isnan(times[1]))
      lines.fail("no duration: '" + header[durationCol == kNone ? timeCols[2] : durationCol] +
                 "' is empty for a job that started and ended");
    trace.add(job);
  }
  return trace;
}

}  // namespace dtbench::report
