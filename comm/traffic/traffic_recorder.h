#pragma once
// TrafficRecorder: bytes moved between ranks, as traffic.csv and traffic_timeline.csv record them
// (docs/run-directory.md).
//
//   traffic.csv           src,dst,bytes,kind   kind = counted: dtbench moved the bytes itself (every
//                                              point-to-point topology, counted by
//                                              CountingPointToPoint); modelled: the backend's own
//                                              all-reduce, for which dtbench records the ring
//                                              formula's bytes (rank r -> r+1: 2(N-1)/N · S).
//   traffic_timeline.csv  t_start_s,src,dst,bytes   bytes sent, in 10 ms bins; t_start_s is the bin's
//                                              start in Unix seconds. Counted traffic only.
//
// One recorder per rank records what that rank sends (src == its rank) and receives; rows of all
// ranks are merged by the caller (rank 0). Not thread-safe: one thread per recorder.

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dtbench::comm {

class TrafficRecorder {
 public:
  static constexpr double kBinSeconds = 0.01;

  TrafficRecorder(int rank, int worldSize);
  int rank() const { return rank_; }

  void recordSend(int dst, int64_t bytes);  // counted, with the current time
  void recordRecv(int src, int64_t bytes);
  // The ring formula's bytes of one native all-reduce of `bytes` (kind = modelled).
  void recordModelledAllreduce(int64_t bytes);

  const std::vector<int64_t>& sentTo() const { return sentCounted_; }      // per peer, counted
  const std::vector<int64_t>& receivedFrom() const { return recvCounted_; }  // per peer, counted
  const std::vector<int64_t>& modelledSentTo() const { return sentModelled_; }
  int64_t bytesSent() const;      // counted + modelled
  int64_t bytesReceived() const;  // counted + modelled

  // (bin index = floor(unix_seconds / kBinSeconds), dst) -> bytes sent.
  const std::map<std::pair<int64_t, int>, int64_t>& timeline() const { return timeline_; }

 private:
  int rank_;
  int worldSize_;
  std::vector<int64_t> sentCounted_, recvCounted_, sentModelled_, recvModelled_;
  std::map<std::pair<int64_t, int>, int64_t> timeline_;
};

// One row of traffic.csv / traffic_timeline.csv, merged over ranks.
struct TrafficRow {
  int src = 0;
  int dst = 0;
  int64_t bytes = 0;
  std::string kind;  // counted | modelled
};
struct TimelineRow {
  int64_t bin = 0;  // t_start_s = bin * kBinSeconds
  int src = 0;
  int dst = 0;
  int64_t bytes = 0;
};

// Writes the header and rows (zero-byte rows left out).
void writeTrafficCsv(std::ostream& out, const std::vector<TrafficRow>& rows);
void writeTimelineCsv(std::ostream& out, const std::vector<TimelineRow>& rows);

// This recorder's sends as rows.
std::vector<TrafficRow> trafficRows(const TrafficRecorder& recorder);
std::vector<TimelineRow> timelineRows(const TrafficRecorder& recorder);

}  // namespace dtbench::comm
