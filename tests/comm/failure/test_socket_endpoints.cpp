// Socket endpoints: /proc/net/tcp and tcp6 rows from fixture text, socket inodes from fd links, this
// process's own sockets read from the real /proc, and the addresses found in Gloo's messages.
#include "catch_torch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/failure/socket_endpoints.h"

using namespace dtbench::comm;

namespace {

Endpoint endpointAt(const std::string& address, uint16_t port) {
  const auto endpoint = makeEndpoint(address, port);
  REQUIRE(endpoint);
  return *endpoint;
}

bool hasSocket(const std::vector<TcpSocket>& sockets, const Endpoint& local, const Endpoint& remote, int state) {
  return std::any_of(sockets.begin(), sockets.end(), [&](const TcpSocket& s) {
    return s.local == local && s.remote == remote && s.state == state && s.inode != 0;
  });
}

// A file descriptor that closes itself.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

uint16_t boundPort(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  return ntohs(address.sin_port);
}

}  // namespace

// Rows as a little-endian (x86-64, aarch64) kernel writes them: each 32-bit address word is a number
// in host byte order, so 127.0.0.1 reads 0100007F and 10.1.0.3 reads 0300010A; ports are plain hex.
TEST_CASE("parseProcNetTcp reads IPv4 rows of /proc/net/tcp", "[socket_endpoints]") {
  const std::string text =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1388 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 "
      "0000000000000000 100 0 0 10 0\n"
      "   1: 0300010A:A35E 0100010A:733C 01 00000000:00000000 00:00000000 00000000     0        0 4243 1 "
      "0000000000000000 20 4 30 10 -1\n"
      "   2: 0300010A:A360 0100010A:733C 06 00000000:00000000 03:00000F9C 00000000     0        0 0 3 "
      "0000000000000000\n"
      "   3: garbage row\n"
      "   4: 0300010:A35E 0100010A:733C 01 00000000:00000000 00:00000000 00000000     0        0 4244\n";
  const auto sockets = parseProcNetTcp(text);
  REQUIRE(sockets.size() == 3);
  CHECK(sockets[0].local == endpointAt("127.0.0.1", 5000));
  CHECK(sockets[0].remote == endpointAt("0.0.0.0", 0));
  CHECK(sockets[0].state == 0x0A);
  CHECK(sockets[0].inode == 4242);
  CHECK(sockets[1].local == endpointAt("10.1.0.3", 41822));
  CHECK(sockets[1].remote == endpointAt("10.1.0.1", 29500));
  CHECK(sockets[1].state == 0x01);
  CHECK(sockets[1].inode == 4243);
  CHECK(sockets[2].local.str() == "10.1.0.3:41824");
  CHECK(sockets[2].inode == 0);  // TIME_WAIT: no socket behind it
  CHECK(parseProcNetTcp("").empty());
}

TEST_CASE("parseProcNetTcp reads IPv6 rows of /proc/net/tcp6 and folds IPv4-mapped addresses", "[socket_endpoints]") {
  const std::string text =
      "  sl  local_address                         remote_address                        st tx_queue rx_queue tr "
      "tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000001000000:1389 00000000000000000000000000000000:0000 0A 00000000:00000000 "
      "00:00000000 00000000     0        0 5001 1 0000000000000000 100 0 0 10 0\n"
      "   1: B80D0120000000000000000003000000:A35E B80D0120000000000000000001000000:1389 01 00000000:00000000 "
      "00:00000000 00000000     0        0 5002 1 0000000000000000 20 4 30 10 -1\n"
      "   2: 0000000000000000FFFF00000300010A:1389 0000000000000000FFFF00000200010A:9C41 01 00000000:00000000 "
      "00:00000000 00000000     0        0 5003 1 0000000000000000 20 4 30 10 -1\n";
  const auto sockets = parseProcNetTcp(text);
  REQUIRE(sockets.size() == 3);
  CHECK(sockets[0].local.str() == "[::1]:5001");
  CHECK(sockets[0].remote.str() == "[::]:0");
  CHECK(sockets[1].local == endpointAt("2001:db8::3", 41822));
  CHECK(sockets[1].remote == endpointAt("2001:db8::1", 5001));
  CHECK(sockets[1].local.str() == "[2001:db8::3]:41822");
  // A dual-stack socket talking IPv4: the same endpoints as the IPv4 table would show.
  CHECK(sockets[2].local == endpointAt("10.1.0.3", 5001));
  CHECK(sockets[2].remote == endpointAt("10.1.0.2", 40001));
  CHECK(sockets[2].inode == 5003);
}

TEST_CASE("socketInodes keeps only socket links with a number", "[socket_endpoints]") {
  const auto inodes = socketInodes({"socket:[12345]", "pipe:[77]", "/dev/null", "socket:[]", "socket:[12a]",
                                    "anon_inode:[eventfd]", "socket:[9]"});
  CHECK(inodes == std::vector<unsigned long>{12345, 9});
}

TEST_CASE("ownTcpSockets finds this process's listening and connected sockets in /proc", "[socket_endpoints]") {
  Fd listener(::socket(AF_INET, SOCK_STREAM, 0));
  REQUIRE(listener.fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener.fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener.fd, 4) == 0);
  address.sin_port = htons(boundPort(listener.fd));
  Fd client(::socket(AF_INET, SOCK_STREAM, 0));
  REQUIRE(::connect(client.fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  Fd accepted(::accept(listener.fd, nullptr, nullptr));
  REQUIRE(accepted.fd >= 0);
  const Endpoint server = endpointAt("127.0.0.1", boundPort(listener.fd));
  const Endpoint caller = endpointAt("127.0.0.1", boundPort(client.fd));

  const auto own = ownTcpSockets();
  CHECK(hasSocket(own, server, endpointAt("0.0.0.0", 0), 0x0A));
  CHECK(hasSocket(own, caller, server, 0x01));
  CHECK(hasSocket(own, server, caller, 0x01));

  // A socket of another process (here: none of ours) is not listed: only our own inodes count.
  const std::size_t before = own.size();
  ::close(accepted.fd);
  accepted.fd = -1;
  const auto after = ownTcpSockets();
  CHECK_FALSE(hasSocket(after, server, caller, 0x01));
  CHECK(after.size() < before);
}

TEST_CASE("ownTcpSockets keeps the rows of its own inodes and survives an unreadable /proc", "[socket_endpoints]") {
  char pattern[] = "/tmp/dtbench-proc-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  REQUIRE(dir);
  const std::string root = dir;
  REQUIRE(::mkdir((root + "/fd").c_str(), 0700) == 0);
  REQUIRE(::mkdir((root + "/net").c_str(), 0700) == 0);
  REQUIRE(::symlink("socket:[4243]", (root + "/fd/5").c_str()) == 0);
  REQUIRE(::symlink("socket:[5002]", (root + "/fd/6").c_str()) == 0);
  REQUIRE(::symlink("pipe:[4242]", (root + "/fd/7").c_str()) == 0);
  std::ofstream(root + "/net/tcp")
      << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
         "   0: 0100007F:1388 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1\n"
         "   1: 0300010A:A35E 0100010A:733C 01 00000000:00000000 00:00000000 00000000     0        0 4243 1\n";
  std::ofstream(root + "/net/tcp6")
      << "  sl  local_address                         remote_address                        st tx_queue\n"
         "   0: B80D0120000000000000000003000000:A35E B80D0120000000000000000001000000:1389 01 00000000:00000000 "
         "00:00000000 00000000     0        0 5002 1\n";
  const auto own = ownTcpSockets(root);
  REQUIRE(own.size() == 2);  // not the listener 4242: that inode is a pipe's here, no socket of ours
  CHECK(own[0].local == endpointAt("10.1.0.3", 41822));
  CHECK(own[1].local == endpointAt("2001:db8::3", 41822));
  CHECK(ownTcpSockets(root + "/missing").empty());
  for (const char* name : {"/fd/5", "/fd/6", "/fd/7", "/net/tcp", "/net/tcp6"}) ::unlink((root + name).c_str());
  for (const char* name : {"/fd", "/net", ""}) ::rmdir((root + name).c_str());
}

TEST_CASE("endpoints are canonical and print and parse back", "[socket_endpoints]") {
  CHECK(endpointAt("::FFFF:10.1.0.3", 1).address == "10.1.0.3");
  CHECK(endpointAt("2001:0db8:0:0::3", 1).address == "2001:db8::3");
  CHECK(endpointAt("10.1.0.3", 41822).str() == "10.1.0.3:41822");
  CHECK_FALSE(makeEndpoint("nodeB", 1));
  CHECK_FALSE(makeEndpoint("10.1.0.300", 1));
  for (const std::string text : {"10.1.0.3:41822", "[2001:db8::3]:41822", "0.0.0.0:0", "[::]:0"}) {
    const auto parsed = parseEndpoint(text);
    REQUIRE(parsed);
    CHECK(parsed->str() == text);
  }
  for (const std::string text : {"", "10.1.0.3", "2001:db8::3:5", "[10.1.0.3]:5", "10.1.0.3:65536", "10.1.0.3:x"})
    CHECK_FALSE(parseEndpoint(text));
}

TEST_CASE("findEndpoints reads the addresses Gloo writes and nothing else", "[socket_endpoints]") {
  SECTION("Debian's Gloo (LibTorch 1.13): the source prefix is not an address") {
    const std::string message =
        "[./gloo/transport/tcp/pair.cc:589] Read error [10.1.0.3]:41822: Connection reset by peer";
    const auto found = findEndpoints(message);
    REQUIRE(found.size() == 1);
    CHECK(found[0].text == "[10.1.0.3]:41822");
    CHECK(found[0].position == message.find("[10.1.0.3]"));
    CHECK(found[0].endpoint == endpointAt("10.1.0.3", 41822));
  }
  SECTION("Gloo of LibTorch 2.x: rank and address, then advice") {
    const auto found = findEndpoints(
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer rank 2 "
        "([10.1.0.3]:41822). This is typically caused by a remote worker crashing.");
    REQUIRE(found.size() == 1);
    CHECK(found[0].endpoint == endpointAt("10.1.0.3", 41822));
  }
  SECTION("IPv6, IPv4-mapped and a sequence number suffix") {
    const auto found = findEndpoints(
        "Read error [2001:db8::3]:41822: Connection reset by peer; Pair is not connected "
        "([::ffff:10.1.0.1]:5000$3 <--> [10.1.0.2]:6000)");
    REQUIRE(found.size() == 3);
    CHECK(found[0].endpoint == endpointAt("2001:db8::3", 41822));
    CHECK(found[1].text == "[::ffff:10.1.0.1]:5000");
    CHECK(found[1].endpoint == endpointAt("10.1.0.1", 5000));
    CHECK(found[2].endpoint == endpointAt("10.1.0.2", 6000));
  }
  SECTION("plain IPv4 address:port") {
    const auto found = findEndpoints("connect 10.1.0.3:29500: Connection refused");
    REQUIRE(found.size() == 1);
    CHECK(found[0].text == "10.1.0.3:29500");
  }
  SECTION("things that look a little like addresses") {
    CHECK(findEndpoints("libtorch 1.13.1, at 12:30:45, [pair.cc:598], [10.1.0.3], [10.1.0.3]:0, "
                        "[10.1.0.3]:99999, [10.1.0.3]:123456, 10.1.0.300:5, v10.1.0.3:5, 1.2.3.4.5:6, "
                        "[nodeB]:80, [fe80::1%eth0]:80")
              .empty());
  }
}
