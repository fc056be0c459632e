#include <string>

#include "catch_torch.h"
#include "trainer/record/device_facts.h"

using dtbench::trainer::cpuModelName;

TEST_CASE("the CPU's model is /proc/cpuinfo's model name", "[device]") {
  const std::string x86 =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 49\nmodel name\t: AMD EPYC 7742 64-Core Processor\n"
      "cpu MHz\t\t: 2245.780\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7742 64-Core Processor\n";
  CHECK(cpuModelName(x86) == "AMD EPYC 7742 64-Core Processor");  // not "model", the family number
  const std::string arm = "processor\t: 0\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n\nModel\t\t: Raspberry Pi 4 Model B\n";
  CHECK(cpuModelName(arm) == "Raspberry Pi 4 Model B");
  CHECK(cpuModelName("").empty());
}

TEST_CASE("a CPU rank records its model, cores, threads, host and the machine's boot id", "[device]") {
  const dtbench::run::DeviceFacts d = dtbench::trainer::describeDevice(c10::Device(c10::kCPU));
  CHECK(d.type == "cpu");
  CHECK_FALSE(d.model.empty());
  CHECK_FALSE(d.host.empty());
  CHECK(d.bootId.size() == 36);  // a UUID, the same for every process of this boot
  CHECK(d.bootId == dtbench::trainer::describeDevice(c10::Device(c10::kCPU)).bootId);
  REQUIRE(d.cores);
  CHECK(*d.cores >= 1);
  CHECK(d.threads);
  CHECK_FALSE(d.smCount);
  const auto all = dtbench::trainer::describeDevices(c10::Device(c10::kCPU), nullptr);
  REQUIRE(all.size() == 1);
  CHECK(all[0].model == d.model);
}
