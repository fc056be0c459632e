// A capture directory made by hand (two nodes' link interfaces and one lo, headers only) loaded and
// turned into the wire tables: each packet counted once at its sender's capture point, pairs, link
// bins, flows and the independent count check, against hand-worked numbers.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/capture/capture_files.h"
#include "experiments/capture/wire_capture.h"
#include "experiments/capture/wire_tables.h"
#include "synthetic_pcap.h"

using namespace dtbench::capture;
using namespace dtbench::capture::testing;

namespace {

constexpr int64_t kT = 1700000000LL * 1000000;  // the capture's start, in Unix microseconds
constexpr double kStart_s = 1700000000.0, kEnd_s = 1700000000.01;

TcpSpec segment(int64_t payload, uint32_t seq) {
  TcpSpec s;
  s.seq = seq;
  s.ack = 1;
  s.payload = payload;
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool hasLine(const std::string& csv, const std::string& line) {
  for (const std::string& l : lines(csv))
    if (l == line) return true;
  return false;
}

// node1 (10.0.0.1: eth0 and lo) sends two TCP segments to node2 (10.0.0.2), which ACKs; the
// controller (10.0.0.254) sends node1 a UDP datagram and node1 ARPs for it; node2 also saw a
// malformed frame and, before its counters' window, a datagram from the controller.
std::string makeCaptureDirectory() {
  const std::string dir = freshDirectory("wire_tables");
  const Bytes f1 = tcpFrame(segment(1000, 1)), f2 = tcpFrame(segment(500, 1001));
  TcpSpec ack;
  ack.src = "10.0.0.2";
  ack.dst = "10.0.0.1";
  ack.srcPort = 5000;
  ack.dstPort = 40000;
  ack.seq = 1;
  ack.ack = 1501;
  const Bytes f3 = tcpFrame(ack);
  const Bytes f4 = udpFrame("10.0.0.254", "10.0.0.1", 6817, 7000, 100);
  const Bytes f5 = arpFrame("10.0.0.1", "10.0.0.254");
  TcpSpec local;
  local.src = local.dst = "127.0.0.1";
  local.srcPort = 1;
  local.dstPort = 2;
  local.payload = 10;
  const Bytes lo = tcpFrame(local);
  Bytes malformed = tcpFrame({});
  malformed.resize(20);

  const std::vector<TimedFrame> node1 = {
      {kT + 100, f1}, {kT + 1200, f2}, {kT + 1350, f3}, {kT + 6000, f4}, {kT + 6100, f5}};
  const std::vector<TimedFrame> node1lo = {{kT + 200, lo}};
  const std::vector<TimedFrame> early = {{kT - 500000, udpFrame("10.0.0.254", "10.0.0.2", 6817, 7000, 100)}};
  const std::vector<TimedFrame> node2inWindow = {
      {kT + 150, f1}, {kT + 1250, f2}, {kT + 1300, f3}, {kT + 6110, f5}, {kT + 7000, malformed}};
  std::vector<TimedFrame> node2 = early;
  node2.insert(node2.end(), node2inWindow.begin(), node2inWindow.end());
  writePcap(dir + "/node1.eth0.pcap", node1, 128);
  writePcap(dir + "/node1.lo.pcap", node1lo, 128);
  writePcap(dir + "/node2.eth0.pcap", node2, 128);

  CaptureFile one;
  one.node = "node1";
  one.started_s = kStart_s;
  one.stopped_s = kEnd_s;
  one.interfaces = {interfaceFor("node1", "eth0", {"10.0.0.1", "fe80::1"}, node1, kStart_s, kEnd_s),
                    interfaceFor("node1", "lo", {"127.0.0.1", "::1"}, node1lo, kStart_s, kEnd_s)};
  writeCaptureFile(dir + "/node1.capture.json", one);
  CaptureFile two;
  two.node = "node2";
  two.started_s = kStart_s;
  two.stopped_s = kEnd_s;
  two.interfaces = {interfaceFor("node2", "eth0", {"10.0.0.2"}, node2inWindow, kStart_s, kEnd_s)};
  two.interfaces[0].packetsCaptured = static_cast<int64_t>(node2.size());
  writeCaptureFile(dir + "/node2.capture.json", two);
  std::ofstream(dir + "/cluster.json")
      << R"({"controller": {"address": "10.0.0.254", "port": 6817},
             "nodes": [{"name": "node1", "address": "10.0.0.1"}, {"name": "node2", "address": "10.0.0.2"}]})";
  return dir;
}

}  // namespace

TEST_CASE("Each packet is counted once at its sender's capture point", "[capture][wire]") {
  const std::string dir = makeCaptureDirectory();
  const WireCapture capture = loadWireCapture(dir, dir + "/cluster.json");
  REQUIRE(capture.points.size() == 3);
  CHECK(capture.points[0].link == "node1");
  CHECK(capture.points[1].link == "node1:lo");
  CHECK(capture.points[2].link == "node2");
  // node1 eth0: f1, f2, ARP (sent), the controller's datagram (received); f3 is node2's.
  CHECK(capture.points[0].countedFrames == 4);
  CHECK(capture.points[1].countedFrames == 1);
  // node2: f3 (sent), the malformed frame and the early datagram (received).
  CHECK(capture.points[2].countedFrames == 3);
  CHECK(capture.packets.size() == 8);
  CHECK(capture.complete());
  CHECK(capture.warnings.empty());
  for (size_t k = 1; k < capture.packets.size(); ++k)
    CHECK(capture.packets[k - 1].packet.t_s <= capture.packets[k].packet.t_s);
}

TEST_CASE("wire_pairs.csv counts frames and bytes per address pair", "[capture][wire]") {
  const std::string dir = makeCaptureDirectory();
  const std::string csv = wirePairsCsv(loadWireCapture(dir, dir + "/cluster.json"));
  const std::vector<std::string> expected = {
      "src,dst,src_host,dst_host,frames,frame_bytes,wire_frames,wire_bytes,ip_bytes,tcp_payload_bytes",
      "10.0.0.1,10.0.0.2,node1,node2,2,1608,2,1608,1580,1500",
      "10.0.0.1,10.0.0.254,node1,controller,1,42,1,42,0,0",
      "10.0.0.2,10.0.0.1,node2,node1,1,54,1,54,40,0",
      "10.0.0.254,10.0.0.1,controller,node1,1,142,1,142,128,0",
      "10.0.0.254,10.0.0.2,controller,node2,1,142,1,142,128,0",
      "127.0.0.1,127.0.0.1,node1,node1,1,64,1,64,50,10",
  };
  CHECK(lines(csv) == expected);

  SECTION("without a cluster file the controller has no name") {
    const std::string plain = wirePairsCsv(loadWireCapture(dir));
    CHECK(hasLine(plain, "10.0.0.254,10.0.0.1,,node1,1,142,1,142,128,0"));
  }
}

TEST_CASE("wire_links.csv bins each link's directions at 1 5 and 10 ms", "[capture][wire]") {
  const std::string dir = makeCaptureDirectory();
  const std::string csv = wireLinksCsv(loadWireCapture(dir, dir + "/cluster.json"));
  CHECK(lines(csv)[0] == "bin_ms,t_start_s,link,direction,frames,frame_bytes,tcp_payload_bytes");
  // Each link direction at its own capture point (node2's downlink at node2's times). 1 ms: node1
  // sends f1 in bin 0, f2 in bin 1, the ARP in bin 6; node2 receives f1 (t + 150 us) in bin 0, f2
  // (t + 1250 us) in bin 1, the broadcast ARP in bin 6 and the malformed frame in bin 7; node2 sends
  // the ACK in bin 1, which node1 receives in bin 1; lo in bin 0.
  CHECK(hasLine(csv, "1,1700000000.000000,node1,up,1,1054,1000"));
  CHECK(hasLine(csv, "1,1700000000.001000,node1,up,1,554,500"));
  CHECK(hasLine(csv, "1,1700000000.006000,node1,up,1,42,0"));
  CHECK(hasLine(csv, "1,1700000000.000000,node2,down,1,1054,1000"));
  CHECK(hasLine(csv, "1,1700000000.001000,node2,down,1,554,500"));
  CHECK(hasLine(csv, "1,1700000000.001000,node2,up,1,54,0"));
  CHECK(hasLine(csv, "1,1700000000.001000,node1,down,1,54,0"));
  CHECK(hasLine(csv, "1,1700000000.006000,node1,down,1,142,0"));
  CHECK(hasLine(csv, "1,1700000000.006000,node2,down,1,42,0"));
  CHECK(hasLine(csv, "1,1700000000.007000,node2,down,1,20,0"));
  CHECK(hasLine(csv, "1,1699999999.500000,node2,down,1,142,0"));
  CHECK(hasLine(csv, "1,1700000000.000000,node1:lo,local,1,64,10"));
  // 5 ms: f1 and f2 share bin 0; 10 ms: node1's whole up direction is one bin.
  CHECK(hasLine(csv, "5,1700000000.000000,node1,up,2,1608,1500"));
  CHECK(hasLine(csv, "5,1700000000.005000,node1,up,1,42,0"));
  CHECK(hasLine(csv, "10,1700000000.000000,node1,up,3,1650,1500"));
  CHECK(hasLine(csv, "10,1700000000.000000,node2,down,4,1670,1500"));
  // 1 ms rows: node1 up 3, down 2; node2 up 1, down 5 (with the early one); lo 1.
  size_t oneMs = 0;
  for (const std::string& l : lines(csv))
    if (l.rfind("1,", 0) == 0) ++oneMs;
  CHECK(oneMs == 12);
}

TEST_CASE("wire_flows.csv and wire_flow_bins.csv list the flows in order of their first packet", "[capture][wire]") {
  const std::string dir = makeCaptureDirectory();
  const WireCapture capture = loadWireCapture(dir, dir + "/cluster.json");
  const std::vector<std::string> flows = lines(wireFlowsCsv(capture));
  REQUIRE(flows.size() == 6);
  CHECK(flows[0] ==
        "flow,protocol,src,src_port,dst,dst_port,src_host,dst_host,src_rank,dst_rank,class,first_s,last_s,packets,"
        "frame_bytes,payload_bytes,stream_bytes,retransmitted_packets,retransmitted_bytes,timeouts");
  CHECK(flows[1] == "0,udp,10.0.0.254,6817,10.0.0.2,7000,controller,node2,-1,-1,other,1699999999.500000,"
                    "1699999999.500000,1,142,100,0,0,0,0");
  CHECK(flows[2] == "1,tcp,10.0.0.1,40000,10.0.0.2,5000,node1,node2,-1,-1,other,1700000000.000100,"
                    "1700000000.001200,2,1608,1500,1500,0,0,0");
  CHECK(flows[3] == "2,tcp,127.0.0.1,1,127.0.0.1,2,node1,node1,-1,-1,other,1700000000.000200,"
                    "1700000000.000200,1,64,10,10,0,0,0");
  CHECK(flows[4].rfind("3,tcp,10.0.0.2,5000,10.0.0.1,40000,node2,node1,", 0) == 0);
  CHECK(flows[5].rfind("4,udp,10.0.0.254,6817,10.0.0.1,7000,controller,node1,", 0) == 0);
  const std::string bins = wireFlowBinsCsv(capture);
  CHECK(lines(bins)[0] == "t_start_s,flow,packets,frame_bytes,tcp_payload_bytes");
  CHECK(hasLine(bins, "1700000000.000000,1,2,1608,1500"));
  CHECK(lines(bins).size() == 6);
  CHECK(lines(wireRetransmissionsCsv(capture)).size() == 1);
}

TEST_CASE("The count check allows the frames at the window's edges to fall on either side of a reading", "[capture][wire]") {
  WireCapture capture;
  CapturePoint p;
  p.node = "node1";
  p.interface.name = "eth0";
  p.interface.countersBefore = {100.0, 0, 0, 0, 0};
  p.windowFrames = 10;
  p.windowBytes = 1000;
  p.edgeFrames = 2;
  p.edgeBytes = 200;
  const auto check = [&](int64_t packets, int64_t bytes) {
    capture.points = {p};
    capture.points[0].interface.countersAfter = {110.0, bytes, packets, 0, 0};
    return wireSummary(capture)["capture_points"][0]["count_check"];
  };
  nlohmann::json c = check(9, 900);  // a frame counted before the first reading, stamped after it
  CHECK(c["frames_equal"] == false);
  CHECK(c["frames_consistent"] == true);
  CHECK(c["bytes_consistent"] == true);
  CHECK(c["edge_frames"] == 2);
  c = check(12, 1200);  // two frames stamped just outside the window, counted inside it
  CHECK(c["frames_consistent"] == true);
  c = check(7, 700);  // more missing than the edges hold: a frame the capture kept that no counter saw
  CHECK(c["frames_consistent"] == false);
  CHECK(c["bytes_consistent"] == false);
  c = check(10, 1000);
  CHECK(c["frames_equal"] == true);
  CHECK(c["bytes_equal"] == true);

  SECTION("a frame is in the edge when it lies within kCountEdgeS of a reading, inside the window or not") {
    const std::string dir = makeCaptureDirectory();
    CaptureFile file = readCaptureFile(dir + "/node1.capture.json");
    file.interfaces[0].countersBefore.t_s = kStart_s - 1;  // every frame of node1 lies a second from both readings
    file.interfaces[0].countersAfter.t_s = kEnd_s + 1;
    writeCaptureFile(dir + "/node1.capture.json", file);
    const nlohmann::json summary = wireSummary(loadWireCapture(dir, dir + "/cluster.json"));
    CHECK(summary["capture_points"][0]["count_check"]["edge_frames"] == 0);
    CHECK(summary["capture_points"][2]["count_check"]["edge_frames"] == 5);  // node2: a 10 ms window
  }
}

TEST_CASE("wire_summary.json checks the capture against the interface counters", "[capture][wire]") {
  const std::string dir = makeCaptureDirectory();
  const nlohmann::json summary = wireSummary(loadWireCapture(dir, dir + "/cluster.json"));
  CHECK(summary["complete"] == true);
  REQUIRE(summary["capture_points"].size() == 3);
  const nlohmann::json& node1 = summary["capture_points"][0]["count_check"];
  CHECK(node1["captured_frames"] == 5);
  CHECK(node1["captured_bytes"] == 1054 + 554 + 54 + 142 + 42);
  CHECK(node1["bytes_equal"] == true);
  CHECK(node1["frames_equal"] == true);
  CHECK(summary["capture_points"][1]["count_check"]["counters"] == "tx");
  // node2's early datagram lies before the counters' window.
  const nlohmann::json& node2 = summary["capture_points"][2]["count_check"];
  CHECK(node2["captured_frames"] == 5);
  CHECK(node2["bytes_equal"] == true);
  CHECK(summary["capture_points"][2]["frames_read"] == 6);
  CHECK(summary["totals"]["frames"] == 8);
  CHECK(summary["totals"]["tcp_payload_bytes"] == 1510);
  CHECK(summary["reconciliation"].is_null());

  SECTION("dropped packets make the capture incomplete, loudly") {
    CaptureFile file = readCaptureFile(dir + "/node2.capture.json");
    file.interfaces[0].pcapDropped = 3;
    writeCaptureFile(dir + "/node2.capture.json", file);
    const WireCapture dropped = loadWireCapture(dir);
    CHECK_FALSE(dropped.complete());
    REQUIRE(dropped.warnings.size() == 1);
    CHECK_THAT(dropped.warnings[0], Catch::Contains("node2") && Catch::Contains("dropped 3"));
    CHECK(wireSummary(dropped)["complete"] == false);
  }
  SECTION("a pcap cut short is read up to the cut, and the capture is incomplete") {
    const std::string pcap = dir + "/node1.eth0.pcap";
    std::filesystem::resize_file(pcap, std::filesystem::file_size(pcap) - 10);
    const WireCapture cut = loadWireCapture(dir);
    CHECK_FALSE(cut.complete());
    REQUIRE(cut.warnings.size() == 1);
    CHECK_THAT(cut.warnings[0], Catch::Contains("node1.eth0.pcap ends mid-packet") &&
                                    Catch::Contains("read the 4 packets before it"));
    CHECK(wireSummary(cut)["complete"] == false);
  }
  SECTION("a corrupt record length is named as such, and the capture is incomplete") {
    // Record headers are 16 bytes after the 24-byte file header: seconds, microseconds, the length
    // kept (incl_len), the frame's length. Frame 1 keeps min(1054, 128) bytes.
    const std::string pcap = dir + "/node1.eth0.pcap";
    std::fstream file(pcap, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(24 + 16 + 128 + 8);
    const uint32_t huge = 0x7fffff00;
    file.write(reinterpret_cast<const char*>(&huge), sizeof huge);
    file.close();
    const WireCapture corrupt = loadWireCapture(dir);
    CHECK_FALSE(corrupt.complete());
    REQUIRE(corrupt.warnings.size() == 1);
    CHECK_THAT(corrupt.warnings[0], Catch::Contains("node1.eth0.pcap has a corrupt record after packet 1"));
  }
  SECTION("a pcap that no capture file names makes the capture incomplete") {
    std::filesystem::copy_file(dir + "/node2.eth0.pcap", dir + "/node3.eth0.pcap");
    const WireCapture orphan = loadWireCapture(dir);
    CHECK_FALSE(orphan.complete());
    REQUIRE(orphan.warnings.size() == 1);
    CHECK_THAT(orphan.warnings[0], Catch::Contains("node3.eth0.pcap") && Catch::Contains("belongs to no capture file"));
  }
}

TEST_CASE("writeWireTables writes every table", "[capture][wire]") {
  const std::string dir = makeCaptureDirectory();
  writeWireTables(loadWireCapture(dir), dir + "/tables");
  for (const char* name : {"wire_pairs.csv", "wire_links.csv", "wire_flows.csv", "wire_flow_bins.csv",
                           "wire_retransmissions.csv", "wire_summary.json"})
    CHECK(std::filesystem::is_regular_file(dir + "/tables/" + name));
}

TEST_CASE("A capture directory without capture files or with a missing pcap is a clear error", "[capture][wire]") {
  const std::string empty = freshDirectory("wire_empty");
  CHECK_THROWS_WITH(loadWireCapture(empty), Catch::Contains("no <node>.capture.json"));
  CHECK_THROWS_WITH(loadWireCapture(empty + "/nowhere"), Catch::Contains("does not exist"));
  const std::string dir = makeCaptureDirectory();
  std::filesystem::remove(dir + "/node2.eth0.pcap");
  CHECK_THROWS_WITH(loadWireCapture(dir), Catch::Contains("node2.eth0.pcap") && Catch::Contains("--keep-pcap"));
}

TEST_CASE("Two nodes' loopback flows with the same ports stay apart", "[capture][wire]") {
  const std::string dir = freshDirectory("wire_two_lo");
  TcpSpec local;
  local.src = local.dst = "127.0.0.1";
  local.srcPort = 1;
  local.dstPort = 2;
  local.payload = 10;
  const std::vector<TimedFrame> frames = {{kT + 100, tcpFrame(local)}};
  for (const std::string node : {"node1", "node2"}) {
    writePcap(dir + "/" + node + ".lo.pcap", frames, 128);
    CaptureFile file;
    file.node = node;
    file.interfaces = {interfaceFor(node, "lo", {"127.0.0.1"}, frames, kStart_s, kEnd_s)};
    writeCaptureFile(dir + "/" + node + ".capture.json", file);
  }
  const WireCapture capture = loadWireCapture(dir);
  REQUIRE(capture.flows.size() == 2);
  CHECK(capture.flows[0].key.scope == "node1:lo");
  CHECK(capture.flows[0].srcHost == "node1");
  CHECK(capture.flows[1].key.scope == "node2:lo");
  CHECK(capture.flows[1].dstHost == "node2");
  CHECK(capture.flows[1].streamBytes == 10);
  const std::vector<std::string> pairs = lines(wirePairsCsv(capture));
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[1] == "127.0.0.1,127.0.0.1,node1,node1,1,64,1,64,50,10");
  CHECK(pairs[2] == "127.0.0.1,127.0.0.1,node2,node2,1,64,1,64,50,10");
}
