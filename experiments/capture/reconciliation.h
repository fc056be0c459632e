#pragma once
// Reconciliation: every byte of TCP payload on the wire, per directed rank pair, put in a category and
// set beside what dtbench counted (docs/wire.md, "Reconciliation").
//
// Headers alone cannot tell gradients from BatchNorm broadcasts or control messages: they share each
// pair's connection. The message log can: rank r's operations that may put bytes on its connection to
// s (its sends to s, its receives from s, whose notices travel towards s, and its collectives) are
// cut into blocks of consecutive operations of one category. Block k occupies one range of the TCP
// stream r -> s. The range's end is placed at the stream position the capture shows at time
//     T_k = max(the time s finished block k's last operation, the time r posted block k+1's first)
// because every byte of block k had reached s by the first, and no byte of block k+1 was written
// before the second. Stream positions follow capture time (new data leaves in sequence order), so a
// segment's first transmission belongs to the block whose [T_{k-1}, T_k) holds its timestamp. Bytes
// before r's first operation are `setup` (the backend's handshake), bytes after s finished r's last
// block `unattributed`, bytes sent again `retransmission`. Nothing is fitted: the wire's bytes per
// category are measured, and their difference from the counted payload is the backend's framing.
//
// Contract
//   reconcile(flows, files)  flows labelled by labelFlows (flow_owners.h); each flow is attributed
//                            on its own (several connections of one pair add up). Rows per directed
//                            rank pair and category for `backend` and `store` flows, per directed host
//                            pair for `launcher`, `slurm` and `other` flows (ranks -1), in a fixed
//                            order; zero rows are left out.
//   counted_bytes            the payload bytes of r's logged sends to s of that category (what
//                            CountingPointToPoint counted for point-to-point topologies; collectives
//                            count 0, their per-peer bytes are the backend's choice); messages = r's
//                            logged operations of the category on the pair (sends, receives' notices,
//                            collectives).
//   Summary                  wire payload (TCP payload bytes, every flow), attributed = not
//                            `unattributed`; the largest |difference| of `gradients` rows with counted
//                            bytes, in percent, and the same over the rows of every category with
//                            counted bytes (pair averaging's `parameters` too), over the pairs that
//                            have a backend connection on the wire (Open MPI's same-node ranks use shared memory: counted, never on a
//                            socket; they are counted apart); per pair and category the framing per
//                            operation.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/capture/message_files.h"
#include "experiments/capture/tcp_streams.h"

namespace dtbench::capture {

struct ReconciliationRow {
  int srcRank = -1;
  int dstRank = -1;
  std::string srcHost;
  std::string dstHost;
  std::string category;
  int64_t messages = 0;
  int64_t countedBytes = 0;
  int64_t wireBytes = 0;
  int64_t difference() const { return wireBytes - countedBytes; }
};

struct ReconciliationSummary {
  int64_t wirePayloadBytes = 0;
  int64_t unattributedBytes = 0;
  double attributedFraction = 1.0;
  int64_t countedGradientBytes = 0;
  int64_t wireGradientBytes = 0;
  double maxGradientErrorPct = 0;  // over gradients rows with counted bytes; 0 when none
  double maxCountedErrorPct = 0;   // over the rows of every category with counted bytes; 0 when none
  int countedRows = 0;             // such rows
  int gradientPairs = 0;           // such rows
  int pairsWithoutConnection = 0;  // gradients rows with counted bytes but no connection on the wire
};

struct Reconciliation {
  std::vector<ReconciliationRow> rows;
  ReconciliationSummary summary;
};

Reconciliation reconcile(const std::vector<Flow>& flows, const MessageFiles& files);

void writeReconciliationCsv(std::ostream& out, const std::vector<ReconciliationRow>& rows);
nlohmann::json reconciliationJson(const Reconciliation& reconciliation);

// Reads the message log in `messagesDir`, labels `flows` (flow_owners.h) and reconciles them; the
// tables (wire_tables.h) write its rows as reconciliation.csv and its summary into wire_summary.json.
Reconciliation labelAndReconcile(std::vector<Flow>& flows, const std::string& messagesDir);

}  // namespace dtbench::capture
