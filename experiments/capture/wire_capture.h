#pragma once
// A capture directory loaded into one model: the capture points (one per node and interface, from
// every `<node>.capture.json` and its pcaps) and every packet counted once (docs/wire.md, "dtbench
// capture analyze"), grouped into flows (tcp_streams.h). The wire tables (wire_tables.h) and the
// reconciliation are views of it.
//
// Contract
//   loadWireCapture(directory, clusterFile)
//     - reads every `*.capture.json` in `directory` (by name) and every pcap they name;
//     - names hosts: each capture point's addresses are its node's (`lo`'s are not: every node has
//       them); then, when `clusterFile` (the emulated cluster's cluster.json, "" none) is given, its
//       nodes' addresses are theirs and its controller's address is host "controller"; other
//       addresses have host "";
//     - counts each packet once: on `lo` at that node (link `<node>:lo`, direction `local`); on a
//       link interface, a packet whose source is an address of that interface is counted there (the
//       node sends it: up); one whose source is an address of another captured link interface is
//       left to that sender's capture point; any other (from a node not captured, the controller,
//       or a frame without addresses) is counted where it was received (down);
//     - keeps, apart from that dedupe, every frame of every capture point as the link it crossed saw
//       it (linkFrames): on a link interface `up` when its source is an address of the interface
//       (the node sent it), else `down`; on `lo` `local`. Each link direction is so timed where it
//       was measured: a node's downlink by its own capture, after the switch port's shaper, not when
//       the senders sent (a tree's root receives from two children at once, and its port queues
//       what the two offer);
//     - orders the counted packets by time (ties: capture point, then file order) and builds the
//       flows in that order; each flow gets the hosts of its addresses; a flow on `lo` has the
//       scope "<node>:lo" (FlowKey::scope), so two nodes' loopback flows never merge, and that node
//       as both hosts.
//     Throws std::runtime_error naming the directory when it holds no capture file, and naming the
//     file when a capture file or pcap cannot be read. A pcap cut short at its end, or with a corrupt
//     record, is read up to there; so is one holding fewer packets than its capture file says were
//     written. Each, pcap_dropped > 0 on any interface, and a pcap in the directory that no capture
//     file names (a recorder that never stopped: its node went down) make the capture incomplete
//     (complete() false) and add a warning naming the file, or the node and interface.
//   Per capture point, `windowFrames`/`windowBytes` count every frame it captured (before the
//   dedupe) whose timestamp lies within [counters_before.t_s, counters_after.t_s]: the side of the
//   independent count check that the capture gives (wire_tables.h). `edgeFrames`/`edgeBytes` count
//   those of them within kCountEdgeS of either end: a frame the kernel counted just before a reading
//   can carry a later timestamp (the tap stamps it when the receive softirq runs, which on busy cores
//   lags the driver's counter by milliseconds), and one counted just after a reading an earlier one,
//   so the counters' deltas must lie within [window - edge, window + edge] (the frames just outside
//   the window are in the edge too).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/capture/capture_files.h"
#include "experiments/capture/packet.h"
#include "experiments/capture/reconciliation.h"
#include "experiments/capture/tcp_streams.h"

namespace dtbench::capture {

// How far, in seconds, a frame's timestamp and the interface counters' reading may disagree about
// which side of a reading the frame fell on (the count check's edges).
inline constexpr double kCountEdgeS = 0.02;

struct CapturePoint {
  std::string node;
  InterfaceCapture interface;   // from the capture file
  std::string pcapPath;         // the pcap's path
  std::string link;             // the node, or "<node>:lo"
  bool loopback = false;
  int64_t frames = 0, frameBytes = 0;               // every frame in the pcap
  int64_t windowFrames = 0, windowBytes = 0;        // those within the counters' window
  int64_t edgeFrames = 0, edgeBytes = 0;            // those within kCountEdgeS of either end of it
  int64_t countedFrames = 0;                        // counted here after the dedupe
  bool truncated = false;  // the pcap could not be read to its end, or holds fewer packets than were written
};

struct WirePacket {
  Packet packet;
  int point = 0;                 // the capture point it is counted at
  int flow = -1;                 // Flow::id, −1 none
  int64_t wireFrames = 1, wireBytes = 0;
  std::string srcHost, dstHost;
  std::string loLink;            // "<node>:lo" when counted on a loopback, else ""
};

// One frame at the capture point of the link it crossed.
struct LinkFrame {
  double t_s = 0;
  int point = 0;           // CapturePoint index; its `link` names the link
  char direction = 'u';    // 'u' up (the node sent it), 'd' down (the node received it), 'l' local (lo)
  int64_t frameBytes = 0;
  int64_t tcpPayloadBytes = 0;
};

struct WireCapture {
  std::string directory;
  std::vector<CaptureFile> files;
  std::vector<CapturePoint> points;
  std::map<std::string, std::string> hostOfAddress;
  std::vector<WirePacket> packets;                 // each counted once, in time order
  std::vector<LinkFrame> linkFrames;               // every frame of every capture point, in read order
  std::vector<Flow> flows;                         // by id
  std::vector<Retransmission> retransmissions;     // in time order
  std::vector<std::string> warnings;
  int orphanPcaps = 0;                             // pcaps in the directory no capture file names
  std::optional<Reconciliation> reconciliation;    // with the ranks' message log (reconciliation.h)

  // No interface dropped packets, every pcap was read to its end, and every pcap in the directory
  // belongs to a capture file.
  bool complete() const;
  std::string hostOf(const std::string& address) const;  // "" unknown
};

WireCapture loadWireCapture(const std::string& directory, const std::string& clusterFile = "");

}  // namespace dtbench::capture
