#pragma once
// gatherTraffic: every rank's TrafficRecorder merged into the rows of traffic.csv and
// traffic_timeline.csv (comm/traffic/traffic_recorder.h). Collective over the communicator (two ragged
// all-gathers); every rank gets the merged rows, rank 0 writes them.

#include <vector>

#include "comm/communicator.h"
#include "comm/traffic/traffic_recorder.h"

namespace dtbench::comm {

struct MergedTraffic {
  std::vector<TrafficRow> traffic;    // every (src, dst, kind), zero-byte rows included
  std::vector<TimelineRow> timeline;  // sorted by bin, src, dst
};

MergedTraffic gatherTraffic(Communicator& communicator, const TrafficRecorder& recorder);

}  // namespace dtbench::comm
