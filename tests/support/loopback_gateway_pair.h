// A hub and a branch Gateway on loopback, on real sockets, from YAML files
// with wg keys: TCP clients -> branch listener -> tunnel -> hub -> a test
// server. Loopback has no NAT, so the branch's destination resolver returns
// target(), set by the test. The gateways run on an io_context thread
// (start_io); tests drive plain blocking sockets on their own threads
// (loopback_tcp.h). The fixtures deriving from it start the gateways in the
// order their tests need (start_hub, start_branch_gateway).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "proxy/gateway.h"
#include "tests/support/loopback_tcp.h"
#include "tests/support/shell.h"

namespace egw::test_support {

// The bytes the test servers send and check: byte i of a transfer.
inline std::uint8_t pattern(std::uint64_t offset) { return static_cast<std::uint8_t>((offset * 131 + 7) % 251); }

inline tunnel::Destination loopback(std::uint16_t port) {
  tunnel::Destination d;
  d.address = {127, 0, 0, 1};
  d.port = port;
  return d;
}

class LoopbackGatewayPair : public ::testing::Test {
 protected:
  void TearDown() override {
    work_.reset();
    boost::asio::post(io_, [this] { io_.stop(); });
    io_thread_.join();
    branch_.reset();
    hub_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The keys' and configs' directory: /tmp/NAME-PID.
  void make_dir(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  // Both keys made, the hub started (not yet served: start_io) with peer b1,
  // the branch, allowed `allow` (a YAML flow sequence).
  void start_hub(const std::string& allow, const std::string& extra = "") {
    branch_public_ = make_key("branch");
    hub_public_ = make_key("hub");
    hub_ = std::make_unique<proxy::Gateway>(io_, load(write("hub.yaml", hub_yaml(branch_public_, allow, extra))));
    hub_->start();
  }
  // The hub's config; `extra`: top-level YAML lines.
  std::string hub_yaml(const std::string& branch_public, const std::string& allow, const std::string& extra) {
    return "role: hub\nprivate_key_file: " + key("hub") + "\nlisten: 127.0.0.1:0\npeers:\n  - name: b1\n"
           "    public_key: " + branch_public + "\n    allow: " + allow + "\n" + extra +
           "metrics_listen: \"\"\nstatus_socket: \"\"\n";
  }
  // The branch's config, towards the hub's port on 127.0.0.1 (or a relay's).
  std::string branch_yaml(std::uint16_t hub_port) {
    return "role: branch\nprivate_key_file: " + key("branch") + "\npeers:\n  - name: hub\n    public_key: " +
           hub_public_ + "\n    endpoint: 127.0.0.1:" + std::to_string(hub_port) +
           "\ninterception: {mode: none, listen: \"127.0.0.1:0\", "
           "first_bytes_wait_ms: 5}\nmetrics_listen: \"\"\nstatus_socket: \"\"\n";
  }
  // Starts the branch towards `hub_port` (on the I/O thread once it runs).
  void start_branch_gateway(std::uint16_t hub_port) {
    branch_ = std::make_unique<proxy::Gateway>(io_, load(write("branch.yaml", branch_yaml(hub_port))));
    branch_->set_destination_resolver([this](int) { return std::optional(target()); });
    branch_->start();
    listener_port_ = branch_->listener_endpoint().port();
  }
  void start_io() {
    io_thread_ = std::thread([this] { io_.run(); });
  }
  std::uint16_t hub_port() const { return hub_->tunnel_endpoint().port(); }

  std::string key(const std::string& name) { return (dir_ / (name + ".key")).string(); }
  // A wg private key in key(name); its public key.
  std::string make_key(const std::string& name) {
    EXPECT_EQ(std::system(("umask 077; wg genkey > " + key(name)).c_str()), 0) << "wg (wireguard-tools) is required";
    return run_command("wg pubkey < " + key(name));
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
  proxy::GatewaySnapshot snapshot(proxy::Gateway& g) {
    std::promise<proxy::GatewaySnapshot> p;
    boost::asio::post(io_, [&] { p.set_value(g.snapshot()); });
    return p.get_future().get();
  }

  // Connects to the branch's listener and sends `text`; returns the errno
  // the read ended with (0: EOF). A reset that arrives before the bytes
  // leave is reported once, to the send, and the read then sees EOF (a CI
  // run read 0 for a refused connection): the send's errno counts too.
  int read_error_after(const std::string& text) {
    const int fd = tcp_socket_to(listener_port_);
    if (fd < 0) return -1;
    if (!send_all(fd, std::vector<std::uint8_t>(text.begin(), text.end()))) {
      const int error = errno;
      ::close(fd);
      return error;
    }
    ::shutdown(fd, SHUT_WR);
    int error = 0;
    read_all(fd, &error);
    ::close(fd);
    return error;
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

  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      boost::asio::make_work_guard(io_)};
  std::filesystem::path dir_;
  std::string branch_public_;
  std::string hub_public_;
  std::unique_ptr<proxy::Gateway> hub_;
  std::unique_ptr<proxy::Gateway> branch_;
  std::mutex target_mutex_;
  tunnel::Destination target_;
  std::atomic<std::uint16_t> listener_port_{0};
  std::thread io_thread_;
};

}  // namespace egw::test_support
