// A hub and a branch Gateway on loopback, on real sockets, from YAML files
// with wg keys, for attack tests: the hub starts first (an attacker may be
// at it before the branch comes), the branch when the test says, towards the
// hub or towards a relay in front of it. Behind the hub, a PatternServer.
// The gateways run on an io_context thread; tests drive plain blocking
// sockets on their own threads (tests/support/loopback_tcp.h).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "proxy/gateway.h"
#include "tests/support/loopback_tcp.h"
#include "tests/support/shell.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::proxy::reliability {

namespace fs = std::filesystem;
namespace asio = boost::asio;

inline std::uint8_t pattern(std::uint64_t offset) { return static_cast<std::uint8_t>((offset * 131 + 7) % 251); }

// The server behind the hub. A connection whose first line is a number N
// gets N pattern bytes, then EOF; "JUNKHEAD" gets junk_head(): an HTTP
// response head that never ends. Any other connection is a sink: after
// `hold_ms` (the server does not read: the gateways must buffer boundedly),
// it reads to EOF and records how many bytes came and their FNV-1a hash.
class PatternServer {
 public:
  PatternServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 512);
    thread_ = std::thread([this] { serve(); });
  }
  ~PatternServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (auto& t : workers_) t.join();
  }
  std::uint16_t port() const { return port_; }

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
  void serve() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::lock_guard lock(mutex_);
      workers_.emplace_back([this, c] { handle(c); });
    }
  }
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

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::vector<Sunk> sunk_;
};

inline tunnel::Destination loopback(std::uint16_t port) {
  tunnel::Destination d;
  d.address = {127, 0, 0, 1};
  d.port = port;
  return d;
}

class LoopbackGateways : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("egw-attacks-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    branch_public_ = make_key("branch");
    hub_public_ = make_key("hub");
    hub_ = std::make_unique<Gateway>(
        io_, load(write("hub.yaml", "role: hub\nprivate_key_file: " + key("hub") +
                                        "\nlisten: 127.0.0.1:0\npeers:\n  - name: b1\n    public_key: " +
                                        branch_public_ + "\n    allow: " + hub_allow() +
                                        "\nmetrics_listen: \"\"\nstatus_socket: \"\"\n")));
    hub_->start();
    set_target(loopback(server_.port()));
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    asio::post(io_, [this] { io_.stop(); });
    io_thread_.join();
    branch_.reset();
    hub_.reset();
    fs::remove_all(dir_);
  }
  // The hub's allow list for the branch (YAML flow sequence).
  virtual std::string hub_allow() { return "[\"127.0.0.1/32:" + std::to_string(server_.port()) + "\"]"; }

  // Starts the branch towards the hub's port on 127.0.0.1 (or a relay's).
  void start_branch(std::uint16_t hub_port) {
    auto config = load(write("branch.yaml", "role: branch\nprivate_key_file: " + key("branch") +
                                                "\npeers:\n  - name: hub\n    public_key: " + hub_public_ +
                                                "\n    endpoint: 127.0.0.1:" + std::to_string(hub_port) +
                                                "\ninterception: {mode: none, listen: \"127.0.0.1:0\", "
                                                "first_bytes_wait_ms: 5}\nmetrics_listen: \"\"\nstatus_socket: \"\"\n"));
    std::promise<void> started;
    asio::post(io_, [&] {
      branch_ = std::make_unique<Gateway>(io_, std::move(config));
      branch_->set_destination_resolver([this](int) { return std::optional(target()); });
      branch_->start();
      listener_port_ = branch_->listener_endpoint().port();
      started.set_value();
    });
    started.get_future().get();
  }
  std::uint16_t hub_port() const { return hub_->tunnel_endpoint().port(); }
  tunnel::crypto::Key32 hub_public_key() const { return *tunnel::crypto::parse_wg_key(hub_public_); }

  std::string key(const std::string& name) { return (dir_ / (name + ".key")).string(); }
  std::string make_key(const std::string& name) {
    EXPECT_EQ(std::system(("umask 077; wg genkey > " + key(name)).c_str()), 0) << "wg (wireguard-tools) is required";
    return test_support::run_command("wg pubkey < " + key(name));
  }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static config::GatewayConfig load(const std::string& path) {
    auto c = config::load_gateway_config(path);
    if (auto* err = std::get_if<std::string>(&c)) throw std::runtime_error(*err);
    return std::get<config::GatewayConfig>(c);
  }
  // Snapshot on the I/O thread.
  GatewaySnapshot snapshot(Gateway& g) {
    std::promise<GatewaySnapshot> p;
    asio::post(io_, [&] { p.set_value(g.snapshot()); });
    return p.get_future().get();
  }

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

  // Where the branch sends its next client (read on the I/O thread).
  void set_target(const tunnel::Destination& d) {
    std::lock_guard lock(target_mutex_);
    target_ = d;
  }
  tunnel::Destination target() {
    std::lock_guard lock(target_mutex_);
    return target_;
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{asio::make_work_guard(io_)};
  fs::path dir_;
  PatternServer server_;
  std::string branch_public_;
  std::string hub_public_;
  std::unique_ptr<Gateway> hub_;
  std::unique_ptr<Gateway> branch_;
  std::mutex target_mutex_;
  tunnel::Destination target_;
  std::atomic<std::uint16_t> listener_port_{0};
  std::thread io_thread_;
};

}  // namespace egw::proxy::reliability
