#pragma once
// The wire tables of a loaded capture (docs/wire.md, "dtbench capture analyze"): CSV text with a
// fixed column order and a deterministic row order, and wire_summary.json.
//
// Contract
//   wirePairsCsv        one row per directed address pair (packets without addresses are left out),
//                       ordered by src, dst as text (then hosts: `lo`'s
//                       addresses on two nodes are two rows).
//   wireLinksCsv        bins of 1, 5 and 10 ms; a packet counts in its sender's link `up` and its
//                       receiver's link `down` (WirePacket's links), on lo once as `local`; bin =
//                       floor(microseconds / width), t_start_s = bin × width; ordered by bin_ms, link,
//                       direction, t_start_s; bins without packets left out.
//   wireFlowsCsv        one row per flow, by id; ranks and class as the flow holds them.
//   wireFlowBinsCsv     flows × 10 ms bins, ordered by flow, t_start_s.
//   wireRetransmissionsCsv  one row per retransmitted segment in time order.
//   wireSummary         {"complete", "warnings", "capture_points": [...], "totals", "reconciliation"}:
//                       per capture point its node, interface, link, pcap_stats, the frames counted
//                       there, and the independent count check: the frames and bytes it captured within
//                       [counters_before.t_s, counters_after.t_s] against the counters' deltas (a link
//                       interface Δrx + Δtx, `lo` Δtx: it captures a looped packet once), each pair with
//                       "equal". `captured_bytes` is the frame bytes (`captured_frame_bytes`) less, on
//                       `lo`, 14 per frame: lo's driver counts a packet without its Ethernet header.
//   writeWireTables     writes every table (reconciliation.csv too, when the capture was reconciled)
//                       and wire_summary.json into `outputDir` (created if missing);
//                       throws std::runtime_error naming a file it cannot write.
// Times are written with 6 decimals, bytes and counts as integers.

#include <string>

#include <nlohmann/json.hpp>

#include "experiments/capture/wire_capture.h"

namespace dtbench::capture {

std::string wirePairsCsv(const WireCapture& capture);
std::string wireLinksCsv(const WireCapture& capture);
std::string wireFlowsCsv(const WireCapture& capture);
std::string wireFlowBinsCsv(const WireCapture& capture);
std::string wireRetransmissionsCsv(const WireCapture& capture);
nlohmann::json wireSummary(const WireCapture& capture);

void writeWireTables(const WireCapture& capture, const std::string& outputDir);

}  // namespace dtbench::capture
