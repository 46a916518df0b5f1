// `ensemble-gw status`: the running gateway listens on a Unix stream socket
// (mode 0600: the status names clients and destinations); each client that
// connects gets render_status() of a fresh snapshot, then end of file. No
// request: `socat - UNIX-CONNECT:PATH` works as well as query_status().
//
// The server runs on the gateway's I/O thread: the snapshot is taken there,
// the reply is written asynchronously and capped, and a client that does not
// read it is dropped after a timeout, so a slow client never stalls the gateway.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "proxy/gateway_snapshot.h"
#include "proxy/status_text.h"

namespace egw::proxy {

// Replies longer than this are cut at a line and end with "... (truncated)".
inline constexpr std::size_t kStatusMaxBytes = 256 * 1024;

class StatusServer {
 public:
  // Listens on `path`. A socket file left by a crashed gateway (nobody
  // accepts on it) is replaced; throws std::runtime_error, naming the path,
  // if another gateway is listening there, if the path is not a socket, or
  // if it cannot be bound.
  StatusServer(boost::asio::io_context& io, const std::string& path,
               std::function<GatewaySnapshot()> take_snapshot);
  // Stops accepting and removes the socket file (if it is still ours).
  // Call on the I/O thread, or with the io_context not running.
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

 private:
  class Listener;
  std::shared_ptr<Listener> listener_;
};

struct StatusReply {
  std::string text;                  // the status, when there is no error
  std::optional<std::string> error;  // "cannot connect to PATH: ... (is the gateway running?)"
};

// The client side: connects, reads to the end, gives up after `timeout`.
// Blocking; runs its own io_context.
StatusReply query_status(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace egw::proxy
