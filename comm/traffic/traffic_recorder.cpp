#include "comm/traffic/traffic_recorder.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <type_traits>

#include "comm/topology/ring.h"

namespace dtbench::comm {
namespace {

int64_t sum(const std::vector<int64_t>& values) { return std::accumulate(values.begin(), values.end(), int64_t{0}); }

int64_t currentBin() {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return static_cast<int64_t>(std::floor(now / TrafficRecorder::kBinSeconds));
}

}  // namespace

TrafficRecorder::TrafficRecorder(int rank, int worldSize)
    : rank_(rank), worldSize_(worldSize), sentCounted_(worldSize, 0), recvCounted_(worldSize, 0),
      sentModelled_(worldSize, 0), recvModelled_(worldSize, 0) {}

void TrafficRecorder::recordSend(int dst, int64_t bytes) {
  sentCounted_.at(dst) += bytes;
  timeline_[{currentBin(), dst}] += bytes;
}

void TrafficRecorder::recordRecv(int src, int64_t bytes) { recvCounted_.at(src) += bytes; }

void TrafficRecorder::recordModelledAllreduce(int64_t bytes) {
  if (worldSize_ < 2) return;
  const int64_t perRank = ringBytesPerRank(bytes, worldSize_);
  sentModelled_[(rank_ + 1) % worldSize_] += perRank;
  recvModelled_[(rank_ + worldSize_ - 1) % worldSize_] += perRank;
}

int64_t TrafficRecorder::bytesSent() const { return sum(sentCounted_) + sum(sentModelled_); }
int64_t TrafficRecorder::bytesReceived() const { return sum(recvCounted_) + sum(recvModelled_); }

std::vector<TrafficRow> trafficRows(const TrafficRecorder& recorder) {
  std::vector<TrafficRow> rows;
  for (int dst = 0; dst < static_cast<int>(recorder.sentTo().size()); ++dst) {
    if (recorder.sentTo()[dst] > 0) rows.push_back({recorder.rank(), dst, recorder.sentTo()[dst], "counted"});
    if (recorder.modelledSentTo()[dst] > 0)
      rows.push_back({recorder.rank(), dst, recorder.modelledSentTo()[dst], "modelled"});
  }
  return rows;
}

std::vector<TimelineRow> timelineRows(const TrafficRecorder& recorder) {
  std::vector<TimelineRow> rows;
  for (const auto& [key, bytes] : recorder.timeline()) rows.push_back({key.first, recorder.rank(), key.second, bytes});
  return rows;
}

void writeTrafficCsv(std::ostream& out, const std::vector<TrafficRow>& rows) {
  out << "src,dst,bytes,kind\n";
  for (const TrafficRow& row : rows)
    if (row.bytes > 0) out << row.src << ',' << row.dst << ',' << row.bytes << ',' << row.kind << '\n';
}

void writeTimelineCsv(std::ostream& out, const std::vector<TimelineRow>& rows) {
  out << "t_start_s,src,dst,bytes\n";
  for (const TimelineRow& row : rows) {
    if (row.bytes <= 0) continue;
    char start[32];
    std::snprintf(start, sizeof start, "%.2f", static_cast<double>(row.bin) * TrafficRecorder::kBinSeconds);
    out << start << ',' << row.src << ',' << row.dst << ',' << row.bytes << '\n';
  }
}

}  // namespace dtbench::comm
