#include "experiments/report/jobs/job_state.h"

#include <cctype>
#include <map>

namespace dtbench::report {

JobState normaliseState(const std::string& raw) {
  static const std::map<std::string, JobState> kStates = {
      {"COMPLETED", JobState::kCompleted},     {"PASS", JobState::kCompleted},
      {"PASSED", JobState::kCompleted},        {"SUCCEEDED", JobState::kCompleted},
      {"SUCCESS", JobState::kCompleted},       {"TERMINATED", JobState::kCompleted},
      {"FAILED", JobState::kFailed},           {"NODE_FAIL", JobState::kFailed},
      {"OUT_OF_MEMORY", JobState::kFailed},    {"BOOT_FAIL", JobState::kFailed},
      {"DEADLINE", JobState::kFailed},         {"TIMEOUT", JobState::kFailed},
      {"SPECIAL_EXIT", JobState::kFailed},     {"CANCELLED", JobState::kCancelled},
      {"PREEMPTED", JobState::kCancelled},     {"REVOKED", JobState::kCancelled},
      {"KILLED", JobState::kCancelled},        {"REQUEUED", JobState::kRequeued},
      {"RUNNING", JobState::kUnfinished},      {"PENDING", JobState::kUnfinished},
      {"SUSPENDED", JobState::kUnfinished},    {"RESIZING", JobState::kUnfinished},
      {"REQUEUE_HOLD", JobState::kUnfinished}, {"REQUEUE_FED", JobState::kUnfinished},
      {"STOPPED", JobState::kUnfinished},      {"SIGNALING", JobState::kUnfinished},
      {"STAGE_OUT", JobState::kUnfinished},    {"WAITING", JobState::kUnfinished}};
  std::string word;
  for (char c : raw) {
    if (c == ' ') break;
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  auto it = kStates.find(word);
  return it == kStates.end() ? JobState::kUnknown : it->second;
}

const char* stateName(JobState state) {
  switch (state) {
    case JobState::kCompleted: return "COMPLETED";
    case JobState::kFailed: return "FAILED";
    case JobState::kCancelled: return "CANCELLED";
    case JobState::kRequeued: return "REQUEUED";
    case JobState::kUnfinished: return "UNFINISHED";
    case JobState::kUnknown: break;
  }
  return "UNKNOWN";
}

bool isFinal(JobState state) {
  return state == JobState::kCompleted || state == JobState::kFailed || state == JobState::kCancelled;
}

}  // namespace dtbench::report
