// The gateway pair on loopback (tests/support/loopback_gateway_pair.h) for
// attack tests: the hub starts first (an attacker may be at it before the
// branch comes), the branch when the test says, towards the hub or towards a
// relay in front of it. Behind the hub, a PatternServer.
#pragma once

#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include "tests/support/loopback_gateway_pair.h"
#include "tests/support/loopback_server.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::proxy::reliability {

using test_support::loopback;
using test_support::pattern;

// The server behind the hub. A connection whose first line is a number N
// gets N pattern bytes, then EOF; "JUNKHEAD" gets junk_head(): an HTTP
// response head that never ends. Any other connection is a sink: after
// `hold_ms` (the server does not read: the gateways must buffer boundedly),
// it reads to EOF and records how many bytes came and their FNV-1a hash.
class PatternServer {
 public:
  std::uint16_t port() const { return listener_.port(); }

  // 4 MB of header line where a response head (and its Content-Type) is expected.
  static std::vector<std::uint8_t> junk_head() {
    const std::string start = "HTTP/1.1 200 OK\r\nX-Junk: ";
    std::vector<std::uint8_t> out(start.begin(), start.end());
    out.resize(4'000'000, 'x');
    return out;
  }

  std::atomic<int> hold_ms{0};
  struct Sunk {
    std::uint64_t bytes = 0;
    std::uint64_t hash = 0;
  };
  // The sinks' results, in the order they finished.
  std::vector<Sunk> sunk() {
    std::lock_guard lock(mutex_);
    return sunk_;
  }

  static std::uint64_t fnv1a(std::uint64_t hash, const std::uint8_t* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
    return hash;
  }
  static constexpr std::uint64_t kFnvBasis = 0xcbf29ce484222325ull;

 private:
  void handle(int c) {
    timeval tv{20, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::uint8_t first[32];
    const ssize_t n = ::recv(c, first, sizeof first, MSG_PEEK);
    std::size_t digits = 0;
    while (n > 0 && digits < static_cast<std::size_t>(n) && first[digits] >= '0' && first[digits] <= '9') ++digits;
    if (digits > 0 && digits < static_cast<std::size_t>(n) && first[digits] == '\n') {
      const std::size_t size = std::stoul(std::string(first, first + digits));
      ::recv(c, first, digits + 1, 0);  // consumed: closing with unread bytes would reset
      std::vector<std::uint8_t> reply(size);
      for (std::size_t i = 0; i < size; ++i) reply[i] = pattern(i);
      test_support::send_all(c, reply);
      ::close(c);
      return;
    }
    if (n >= 9 && std::string(first, first + 9) == "JUNKHEAD\n") {
      ::recv(c, first, 9, 0);
      test_support::send_all(c, junk_head());
      ::close(c);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms.load()));
    Sunk s{0, kFnvBasis};
    std::uint8_t buf[65536];
    for (;;) {
      const ssize_t r = ::recv(c, buf, sizeof buf, 0);
      if (r <= 0) break;
      s.bytes += static_cast<std::uint64_t>(r);
      s.hash = fnv1a(s.hash, buf, static_cast<std::size_t>(r));
    }
    ::close(c);
    std::lock_guard lock(mutex_);
    sunk_.push_back(s);
  }

  std::mutex mutex_;
  std::vector<Sunk> sunk_;
  test_support::LoopbackServer listener_{[this](int c) { handle(c); }};
};

class LoopbackGateways : public test_support::LoopbackGatewayPair {
 protected:
  void SetUp() override {
    make_dir("egw-attacks");
    start_hub(hub_allow());
    set_target(loopback(server_.port()));
    start_io();
  }
  // The hub's allow list for the branch (YAML flow sequence).
  virtual std::string hub_allow() { return "[\"127.0.0.1/32:" + std::to_string(server_.port()) + "\"]"; }

  // Starts the branch towards the hub's port on 127.0.0.1 (or a relay's).
  void start_branch(std::uint16_t hub_port) {
    std::promise<void> started;
    boost::asio::post(io_, [&] {
      start_branch_gateway(hub_port);
      started.set_value();
    });
    started.get_future().get();
  }
  tunnel::crypto::Key32 hub_public_key() const { return *tunnel::crypto::parse_wg_key(hub_public_); }

  // A download of `size` pattern bytes through the gateways; true if intact.
  bool download(std::size_t size) {
    const int fd = test_support::tcp_socket_to(listener_port_);
    if (fd < 0) return false;
    const std::string head = std::to_string(size) + "\n";
    const bool sent = test_support::send_all(fd, std::vector<std::uint8_t>(head.begin(), head.end()));
    int error = 0;
    const auto reply = test_support::read_all(fd, &error);
    ::close(fd);
    if (!sent || error != 0 || reply.size() != size) {
      ADD_FAILURE() << "download of " << size << " bytes: sent " << sent << ", error " << error << ", got "
                    << reply.size() << " bytes";
      return false;
    }
    for (std::size_t i = 0; i < size; ++i) {
      if (reply[i] != pattern(i)) return false;
    }
    return true;
  }

  PatternServer server_;
};

}  // namespace egw::proxy::reliability
