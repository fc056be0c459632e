#include "experiments/report/jobs/sacct_file.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "experiments/report/jobs/job_trace_lines.h"
#include "experiments/report/jobs/job_clock.h"

namespace dtbench::report {

const char kSacctHeader[] = "JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocTRES";

namespace {

enum Field {
  kJobId,
  kJobName,
  kUser,
  kPartition,
  kState,
  kExitCode,
  kSubmit,
  kStart,
  kEnd,
  kElapsedRaw,
  kNNodes,
  kAllocTres,
  kFields
};
const char* const kNames[] = {"JobID",  "JobName", "User", "Partition",  "State",  "ExitCode",
                              "Submit", "Start",   "End",  "ElapsedRaw", "NNodes", "AllocTRES"};

void splitBarFields(const std::string& line, std::vector<std::string>& fields) {
  fields.clear();
  size_t from = 0;
  for (;;) {
    const size_t bar = line.find('|', from);
    fields.push_back(line.substr(from, bar == std::string::npos ? std::string::npos : bar - from));
    if (bar == std::string::npos) return;
    from = bar + 1;
  }
}

bool count(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *value = v;
  return true;
}

// GPUs of AllocTRES: gres/gpu=N, else Σ gres/gpu:TYPE=N (Slurm lists both when the GPUs are typed).
int64_t allocatedGpus(const std::string& tres, const JobTraceLines& lines) {
  int64_t plain = -1, typed = 0;
  size_t from = 0;
  while (from <= tres.size() && !tres.empty()) {
    size_t comma = tres.find(',', from);
    if (comma == std::string::npos) comma = tres.size();
    const std::string item = tres.substr(from, comma - from);
    from = comma + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (key != "gres/gpu" && key.rfind("gres/gpu:", 0) != 0) continue;
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int64_t n = 0;
    if (!value.empty() && value[0] == '-') lines.fail("column 'AllocTRES': negative GPUs in '" + item + "'");
    if (!count(value, &n)) lines.fail("column 'AllocTRES': '" + item + "' is not a GPU count");
    if (key == "gres/gpu")
      plain = n;
    else
      typed += n;
  }
  return plain >= 0 ? plain : typed;
}

struct Attempts {
  JobRecord record;
  SlurmJob join;
};

// One data row of the file, checked.
struct Row {
  std::string id;
  double times[3];  // submit, start, end; NaN: none
  int64_t elapsed = 0;
  int64_t gpus = 0;
  JobState state = JobState::kUnknown;
  std::string rawState;
  int64_t line = 0;
};

// Adds one attempt (a row) to its job.
void absorb(Attempts& job, bool first, const Row& row) {
  JobRecord& r = job.record;
  if (first) {
    r.submitS = row.times[0];
    r.attempts = 0;
    job.join.submitS = row.times[0];
  }
  r.line = row.line;
  r.rawState = row.rawState;
  r.state = row.state;
  r.gpus = static_cast<int32_t>(row.gpus);
  if (std::isnan(r.startS)) r.startS = row.times[1];
  r.endS = row.times[2];
  r.durationS += static_cast<double>(row.elapsed);
  r.gpuSeconds += static_cast<double>(row.gpus * row.elapsed);
  ++r.attempts;
  job.join.startS = r.startS;
  job.join.endS = row.times[2];
  job.join.attempts = r.attempts;
  job.join.state = isFinal(row.state) ? stateName(row.state) : r.rawState;
}

// Reads the file line by line, calling onRow for each checked data row; counts trace.rows.
template <typename OnRow>
void readRows(const std::string& path, JobTrace& trace, OnRow&& onRow) {
  JobTraceLines lines(path);
  std::string line;
  if (!lines.next(line)) throw std::runtime_error(path + " is empty: expected sacct's header " + kSacctHeader);
  if (line != kSacctHeader)
    lines.fail("the header is '" + printable(line, 200) + "', not sacct --parsable2's '" + std::string(kSacctHeader) +
               "' (run the command in docs/report.md, \"The sacct contract\")");
  JobClock clock;
  std::vector<std::string> f;
  Row row;
  while (lines.next(line)) {
    splitBarFields(line, f);
    if (f.size() != kFields)
      lines.fail("has " + std::to_string(f.size()) + " fields, sacct's header has " + std::to_string(kFields));
    ++trace.rows;
    if (f[kJobId].empty()) lines.fail("column 'JobID' is empty");
    for (int k : {kSubmit, kStart, kEnd})
      if (!clock.parse(f[k], &row.times[k - kSubmit]))
        lines.fail("column '" + std::string(kNames[k]) + "': '" + f[k] + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
    if (row.times[2] < row.times[1])  // false when either is unknown (NaN)
      lines.fail("column 'End': '" + f[kEnd] + "' is before Start '" + f[kStart] + "': a negative run time");
    int64_t nodes = 0;
    if (!count(f[kElapsedRaw], &row.elapsed))
      lines.fail("column 'ElapsedRaw': '" + f[kElapsedRaw] + "' is not a whole number of seconds");
    if (!count(f[kNNodes], &nodes)) lines.fail("column 'NNodes': '" + f[kNNodes] + "' is not a count");
    row.gpus = allocatedGpus(f[kAllocTres], lines);
    row.state = normaliseState(f[kState]);
    row.rawState = f[kState].substr(0, f[kState].find(' '));
    row.id = f[kJobId];
    row.line = static_cast<int64_t>(lines.number());
    onRow(row);
  }
}

JobTrace emptyTrace(const std::string& path) {
  JobTrace trace;
  trace.path = path;
  trace.kind = "sacct";
  return trace;
}

}  // namespace

JobTrace readSacct(const std::string& path, const std::set<std::string>& joinIds) {
  // sacct -D lists a job's attempts one after another, so a job is complete when the next row has
  // another id: the trace keeps 32 bytes per GPU job (job_trace.h) and 8 per id seen (to find a job
  // whose attempts were not adjacent after all), whatever the file's length.
  JobTrace trace = emptyTrace(path);
  std::vector<size_t> seen;  // hashes of the ids of the jobs completed
  Attempts current;
  std::string currentId;
  bool any = false;
  const auto finish = [&] {
    trace.add(current.record);
    if (joinIds.count(currentId)) trace.slurmJobs.emplace(currentId, current.join);
    seen.push_back(std::hash<std::string>{}(currentId));
  };
  readRows(path, trace, [&](const Row& row) {
    const bool first = !any || row.id != currentId;
    if (first) {
      if (any) finish();
      current = Attempts{};
      currentId = row.id;
      any = true;
    }
    absorb(current, first, row);
  });
  if (any) finish();
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) == seen.end()) return trace;

  // Rare: some job's attempts were apart (or two ids share a hash). Read again, gathering the rows by
  // id in the order of their first row.
  trace = emptyTrace(path);
  std::vector<Attempts> jobs;
  std::unordered_map<std::string, size_t> index;
  readRows(path, trace, [&](const Row& row) {
    const auto [it, added] = index.emplace(row.id, jobs.size());
    if (added) jobs.emplace_back();
    absorb(jobs[it->second], added, row);
  });
  for (const Attempts& job : jobs) trace.add(job.record);
  for (const auto& [id, i] : index)
    if (joinIds.count(id)) trace.slurmJobs.emplace(id, jobs[i].join);
  return trace;
}

}  // namespace dtbench::report
