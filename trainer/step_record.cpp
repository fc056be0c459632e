#include "trainer/step_record.h"

#include <cstdio>

namespace dtbench::trainer {

const char* batchesCsvHeader() {
  return "rank,epoch,step,samples,data_s,h2d_s,forward_s,backward_s,comm_total_s,comm_exposed_s,"
         "optimizer_s,step_s,bytes_sent,bytes_recv";
}

std::string toCsvRow(const StepRecord& r) {
  char line[512];
  std::snprintf(line, sizeof line, "%lld,%lld,%lld,%lld,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%lld,%lld",
                static_cast<long long>(r.rank), static_cast<long long>(r.epoch), static_cast<long long>(r.step),
                static_cast<long long>(r.samples), r.dataS, r.h2dS, r.forwardS, r.backwardS, r.commTotalS,
                r.commExposedS, r.optimizerS, r.stepS, static_cast<long long>(r.bytesSent),
                static_cast<long long>(r.bytesRecv));
  return line;
}

}  // namespace dtbench::trainer
