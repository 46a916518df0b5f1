// Blocking TCP helpers for tests that talk to a gateway on loopback: every
// socket has 5 s send and receive timeouts, so a broken gateway fails the
// test instead of hanging it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace egw::test_support {

// Connected to 127.0.0.1:port, or -1; `rcvbuf` (0: the kernel's) is set
// before the handshake, where it sizes the window the kernel offers.
inline int tcp_socket_to(std::uint16_t port, int rcvbuf = 0, long timeout_s = 5) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, const std::vector<std::uint8_t>& data) {
  std::size_t at = 0;
  while (at < data.size()) {
    const ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads to EOF; *error = errno of a failed read (ECONNRESET for a reset).
inline std::vector<std::uint8_t> read_all(int fd, int* error) {
  std::vector<std::uint8_t> out;
  std::uint8_t buf[65536];
  *error = 0;
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) return out;
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      return out;
    }
    out.insert(out.end(), buf, buf + n);
  }
}

}  // namespace egw::test_support
