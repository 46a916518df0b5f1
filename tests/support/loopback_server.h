// A TCP server on an ephemeral 127.0.0.1 port for the tests behind a
// gateway on loopback: an accept thread, and each connection on a thread of
// its own, handed to `handle` (which closes it). Destruction stops
// accepting and joins every handler, so a test server declares it last
// (destroyed first: its handlers end before the state they use).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace egw::test_support {

class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<void(int)> handle) : handle_(std::move(handle)) {
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
  ~LoopbackServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (auto& t : workers_) t.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  void serve() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      if (stop_) {
        ::close(c);
        return;
      }
      workers_.emplace_back([this, c] { handle_(c); });
    }
  }

  std::function<void(int)> handle_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> workers_;  // the accept thread's alone until it is joined
};

}  // namespace egw::test_support
