#include "experiments/report/jobs/sacct_file.h"

#include <cstdint>
#include <cstdlib>
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

void split(const std::string& line, std::vector<std::string>& fields) {
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
  double firstStartS = std::nan("");
};

}  // namespace

JobTrace readSacct(const std::string& path) {
  JobTraceLines lines(path);
  JobTrace trace;
  trace.path = path;
  trace.kind = "sacct";
  std::string line;
  if (!lines.next(line)) throw std::runtime_error(path + " is empty: expected sacct's header " + kSacctHeader);
  if (line != kSacctHeader)
    lines.fail("the header is '" + printable(line, 200) + "', not sacct --parsable2's '" + std::string(kSacctHeader) +
               "' (run the command in docs/report.md, \"The sacct contract\")");
  JobClock clock;
  std::vector<std::string> f;
  std::vector<Attempts> jobs;
  std::unordered_map<std::string, size_t> index;
  while (lines.next(line)) {
    split(line, f);
    if (f.size() != kFields)
      lines.fail("has " + std::to_string(f.size()) + " fields, sacct's header has " + std::to_string(kFields));
    ++trace.rows;
    if (f[kJobId].empty()) lines.fail("column 'JobID' is empty");
    double times[3];
    for (int k : {kSubmit, kStart, kEnd})
      if (!clock.parse(f[k], &times[k - kSubmit]))
        lines.fail("column '" + std::string(kNames[k]) + "': '" + f[k] + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
    if (times[2] < times[1])  // false when either is unknown (NaN)
      lines.fail("column 'End': '" + f[kEnd] + "' is before Start '" + f[kStart] + "': a negative run time");
    int64_t elapsed = 0, nodes = 0;
    if (!count(f[kElapsedRaw], &elapsed))
      lines.fail("column 'ElapsedRaw': '" + f[kElapsedRaw] + "' is not a whole number of seconds");
    if (!count(f[kNNodes], &nodes)) lines.fail("column 'NNodes': '" + f[kNNodes] + "' is not a count");
    const int64_t gpus = allocatedGpus(f[kAllocTres], lines);
    const JobState state = normaliseState(f[kState]);

    auto [it, added] = index.emplace(f[kJobId], jobs.size());
    if (added) {
      jobs.emplace_back();
      jobs.back().record.submitS = times[0];
      jobs.back().record.attempts = 0;
      jobs.back().join.submitS = times[0];
    }
    Attempts& job = jobs[it->second];
    JobRecord& r = job.record;
    r.line = static_cast<int64_t>(lines.number());
    r.rawState = f[kState].substr(0, f[kState].find(' '));
    r.state = state;
    r.gpus = static_cast<int32_t>(gpus);
    if (std::isnan(r.startS)) r.startS = times[1];
    r.endS = times[2];
    r.durationS += static_cast<double>(elapsed);
    r.gpuSeconds += static_cast<double>(gpus * elapsed);
    ++r.attempts;
    job.join.startS = r.startS;
    job.join.endS = times[2];
    job.join.attempts = r.attempts;
    job.join.state = isFinal(state) ? stateName(state) : r.rawState;
  }
  for (size_t i = 0; i < jobs.size(); ++i) trace.add(jobs[i].record);
  for (const auto& [id, i] : index) trace.slurmJobs.emplace(id, jobs[i].join);
  return trace;
}

}  // namespace dtbench::report
