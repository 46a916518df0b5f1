// `ensemble-gw status`: the running gateway listens on a Unix stream socket
// (mode 0600: the status names clients and destinations). A client may send
// one request line, "text" or "json", and gets render_status() or
// render_status_json() of a fresh snapshot, then end of file. A client that
// sends nothing gets the text after kStatusRequestWait, or at once when it
// shuts down its side: `socat - UNIX-CONNECT:PATH </dev/null` works as well
// as query_status().
//
// The server runs on the gateway's I/O thread: the snapshot is taken there,
// the reply is written asynchronously and capped, and a client that does not
// read it is dropped after a timeout, so a slow client never stalls the gateway.
// It also samples the gateway once a second (ClassRates), so that each reply
// carries the bytes per second of each class over the last seconds.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "proxy/gateway_snapshot.h"
#include "proxy/status_json.h"
#include "proxy/status_text.h"

namespace egw::proxy {

// Replies longer than this are cut at a line and end with "... (truncated)"
// (text), or list fewer streams (JSON: it stays valid).
inline constexpr std::size_t kStatusMaxBytes = 256 * 1024;
// How long the server waits for a request line before it sends the text.
inline constexpr std::chrono::milliseconds kStatusRequestWait{250};

enum class StatusFormat { text, json };

class StatusServer {
 public:
  // Listens on `path`. A socket file left by a crashed gateway (nobody
  // accepts on it) is replaced; throws std::runtime_error, naming the path,
  // if another gateway is listening there, if the path is not a socket, or
  // if it cannot be bound.
  // `sample_every`: how often it samples the gateway for the rates.
  StatusServer(boost::asio::io_context& io, const std::string& path,
               std::function<GatewaySnapshot()> take_snapshot,
               std::chrono::milliseconds sample_every = std::chrono::seconds(1));
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

// The client side: connects, asks for `format`, reads to the end, gives up
// after `timeout`. Blocking; runs its own io_context.
StatusReply query_status(const std::string& path, std::chrono::milliseconds timeout,
                         StatusFormat format = StatusFormat::text);

}  // namespace egw::proxy
