// <node>.capture.json written and read back, and the errors of a malformed one.

#include <catch2/catch.hpp>

#include <fstream>

#include "common/file_names.h"
#include "experiments/capture/capture_files.h"
#include "experiments/capture/interface_counters.h"
#include "synthetic_pcap.h"

using namespace dtbench::capture;
using namespace dtbench::capture::testing;

TEST_CASE("A capture file reads back what was written", "[capture][files]") {
  CaptureFile file;
  file.node = "node3";
  file.snaplen = 96;
  file.started_s = 1700000000.25;
  file.stopped_s = 1700000012.5;
  InterfaceCapture i;
  i.name = "eth0";
  i.pcap = "node3.eth0.pcap";
  i.linkType = "EN10MB";
  i.addresses = {"10.78.0.3", "fe80::3"};
  i.packetsCaptured = 1234;
  i.pcapReceived = 1240;
  i.pcapDropped = 6;
  i.interfaceDropped = 1;
  i.countersBefore = {1700000000.2, 10, 1, 20, 2};
  i.countersAfter = {1700000012.6, 1000010, 801, 5000020, 3902};
  file.interfaces = {i};
  const std::string dir = freshDirectory("capture_files");
  const std::string path = dir + "/" + captureFileName("node3");
  CHECK(captureFileName("node3") == "node3.capture.json");
  writeCaptureFile(path, file);
  const CaptureFile back = readCaptureFile(path);
  CHECK(back.node == "node3");
  CHECK(back.snaplen == 96);
  CHECK(back.started_s == file.started_s);
  CHECK(back.stopped_s == file.stopped_s);
  REQUIRE(back.interfaces.size() == 1);
  const InterfaceCapture& b = back.interfaces[0];
  CHECK(b.name == "eth0");
  CHECK(b.pcap == "node3.eth0.pcap");
  CHECK(b.linkType == "EN10MB");
  CHECK(b.addresses == i.addresses);
  CHECK(b.packetsCaptured == 1234);
  CHECK(b.pcapReceived == 1240);
  CHECK(b.pcapDropped == 6);
  CHECK(b.interfaceDropped == 1);
  CHECK(b.countersBefore.t_s == i.countersBefore.t_s);
  CHECK(b.countersAfter.rxBytes == 1000010);
  CHECK(b.countersAfter.txPackets == 3902);
  const nlohmann::json json = toJson(file);
  CHECK(json["interfaces"][0]["counters_after"]["tx_bytes"] == 5000020);
  CHECK(json["interfaces"][0]["interface_dropped"] == 1);
}

TEST_CASE("A malformed capture file names the file and the key", "[capture][files]") {
  const std::string dir = freshDirectory("capture_files_bad");
  std::ofstream(dir + "/a.capture.json") << R"({"node": "a", "snaplen": 128, "started_s": 1, "stopped_s": 2,
      "interfaces": [{"name": "eth0", "pcap": "a.eth0.pcap", "link_type": "EN10MB", "addresses": []}]})";
  CHECK_THROWS_WITH(readCaptureFile(dir + "/a.capture.json"),
                    Catch::Contains("a.capture.json") && Catch::Contains("packets_captured"));
  std::ofstream(dir + "/b.capture.json") << "{not json";
  CHECK_THROWS_WITH(readCaptureFile(dir + "/b.capture.json"), Catch::Contains("not JSON"));
  CHECK_THROWS_WITH(readCaptureFile(dir + "/none.capture.json"), Catch::Contains("none.capture.json"));
}

TEST_CASE("A capture file naming a pcap outside its directory is refused", "[capture][files]") {
  CHECK(dtbench::common::isPlainFileName("n1.eth0.pcap"));
  for (const char* name : {"", ".", "..", "../victim/precious.pcap", "/tmp/precious.pcap", "sub/n1.pcap"}) {
    INFO(name);
    CHECK_FALSE(dtbench::common::isPlainFileName(name));
    nlohmann::json json = toJson(CaptureFile{"n1", 128, 1, 2, {InterfaceCapture{}}});
    json["interfaces"][0]["pcap"] = name;
    CHECK_THROWS_WITH(captureFileFromJson(json, "n1.capture.json"),
                      Catch::Contains("n1.capture.json: interfaces[0]") &&
                          Catch::Contains("must be a file name inside the capture directory"));
  }
}

TEST_CASE("Interface counters are read from sysfs and name a missing interface", "[capture][files]") {
  const InterfaceCounters lo = readInterfaceCounters("lo");
  CHECK(lo.t_s > 1.6e9);
  CHECK(lo.txBytes >= 0);
  CHECK_THROWS_WITH(readInterfaceCounters("no-such-if0"), Catch::Contains("no-such-if0"));
}
