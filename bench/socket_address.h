// "ADDR:PORT" / "[V6]:PORT" / ":PORT" (any address) to a sockaddr, for the
// POSIX load tools (tcp_perf, conn_scale). Numeric only: no DNS in a benchmark.
#pragma once

#include <netdb.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <string>

namespace egw::bench {

// The address, or nullopt with the reason in *error.
inline std::optional<sockaddr_storage> parse_socket_address(const std::string& s, socklen_t* len,
                                                            std::string* error) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) {
    *error = "address must be ADDR:PORT";
    return std::nullopt;
  }
  std::string host = s.substr(0, colon);
  const std::string port = s.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (host.empty() ? AI_PASSIVE : 0);
  addrinfo* res = nullptr;
  if (const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *error = s + ": " + gai_strerror(rc);
    return std::nullopt;
  }
  sockaddr_storage out{};
  std::memcpy(&out, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return out;
}

}  // namespace egw::bench
