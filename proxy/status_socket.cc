#include "proxy/status_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it (C++20).
#include <utility>
#include <boost/asio.hpp>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "proxy/status_rates.h"

namespace egw::proxy {
namespace {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;
using boost::system::error_code;

// Long enough for any reader at a terminal; short enough that clients which
// connect and never read cannot pile up.
constexpr auto kWriteTimeout = std::chrono::seconds(5);
// After a failed accept (EMFILE, ENFILE...): wait, rather than spin on the I/O thread.
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

std::optional<std::string> path_error(const std::string& path) {
  constexpr std::size_t kMax = sizeof(sockaddr_un{}.sun_path) - 1;
  if (path.empty()) return "empty socket path";
  if (path.size() > kMax) {
    return "socket path is " + std::to_string(path.size()) + " bytes, at most " + std::to_string(kMax);
  }
  return std::nullopt;
}

std::runtime_error server_error(const std::string& path, const std::string& what) {
  return std::runtime_error("status socket " + path + ": " + what);
}

std::string truncated(std::string text) {
  if (text.size() <= kStatusMaxBytes) return text;
  constexpr std::string_view kMarker = "... (truncated)\n";
  const auto cut = text.rfind('\n', kStatusMaxBytes - kMarker.size() - 1);
  text.resize(cut == std::string::npos ? 0 : cut + 1);
  text += kMarker;
  return text;
}

enum class Existing { none, stale, active };

// Whether a socket file at `path` is a live gateway's. A plain non-blocking
// connect(): refused means nobody listens (a crash left the file behind);
// EAGAIN means a listener with a full backlog, still a live one.
Existing probe(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Existing::none;
    throw server_error(path, std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) throw server_error(path, "exists and is not a socket; not replacing it");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw server_error(path, std::string("socket: ") + std::strerror(errno));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  if (error == 0 || error == EAGAIN || error == EINPROGRESS) return Existing::active;
  if (error == ECONNREFUSED) return Existing::stale;
  if (error == ENOENT) return Existing::none;  // removed meanwhile
  throw server_error(path, std::string("cannot tell whether another gateway uses it: ") + std::strerror(error));
}

// One client: its request line (or none), then the reply, written without
// blocking, then close.
struct Client {
  explicit Client(local::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}
  local::socket socket;
  std::string request;
  std::string text;
  asio::steady_timer timer;  // the request wait, then the write timeout
  bool answered = false;
};

// The request is "json" or "text" (anything else, or nothing: text).
StatusFormat requested_format(std::string_view request) {
  const auto end = request.find_first_of("\r\n");
  request = request.substr(0, end);
  while (!request.empty() && request.back() == ' ') request.remove_suffix(1);
  return request == "json" ? StatusFormat::json : StatusFormat::text;
}

void write_reply(std::shared_ptr<Client> client) {
  client->timer.expires_after(kWriteTimeout);
  client->timer.async_wait([client](error_code ec) {
    if (!ec) client->socket.close(ec);  // a client that does not read: the write ends aborted
  });
  asio::async_write(client->socket, asio::buffer(client->text), [client](error_code ec, std::size_t) {
    // Unix sockets keep what the peer has not read yet: closing now loses nothing.
    client->socket.close(ec);
    client->timer.cancel();
  });
}

}  // namespace

class StatusServer::Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& io, const std::string& path, std::function<GatewaySnapshot()> take_snapshot,
           std::chrono::milliseconds sample_every)
      : acceptor_(io),
        retry_(io),
        sampler_(io),
        sample_every_(sample_every),
        path_(path),
        take_snapshot_(std::move(take_snapshot)) {}

  void open() {
    if (auto error = path_error(path_)) throw server_error(path_, *error);
    switch (probe(path_)) {
      case Existing::active:
        throw server_error(path_, "in use: another gateway is running (it accepts connections there)");
      case Existing::stale:
        if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
          throw server_error(path_, std::string("cannot remove the stale socket: ") + std::strerror(errno));
        }
        break;
      case Existing::none:
        break;
    }
    error_code ec;
    acceptor_.open(local(), ec);
    if (ec) throw server_error(path_, "socket: " + ec.message());
    // On Linux bind() gives the file the socket's own mode (less the umask):
    // 0600 from the start, no window in which others may connect.
    ::fchmod(acceptor_.native_handle(), 0600);
    acceptor_.bind(local::endpoint(path_), ec);
    if (ec) throw server_error(path_, "cannot bind: " + ec.message());
    struct stat st {};
    if (::chmod(path_.c_str(), 0600) != 0 || ::lstat(path_.c_str(), &st) != 0) {
      const std::string error = std::strerror(errno);
      ::unlink(path_.c_str());
      throw server_error(path_, "cannot make it private (mode 0600): " + error);
    }
    device_ = st.st_dev;
    inode_ = st.st_ino;
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      ::unlink(path_.c_str());
      throw server_error(path_, "cannot listen: " + ec.message());
    }
  }

  void accept() {
    acceptor_.async_accept([self = shared_from_this()](error_code ec, local::socket socket) {
      if (self->closed_) return;
      if (ec) {
        self->retry_.expires_after(kAcceptRetry);
        self->retry_.async_wait([self](error_code ec) {
          if (!ec && !self->closed_) self->accept();
        });
        return;
      }
      self->serve(std::make_shared<Client>(std::move(socket)));
      self->accept();
    });
  }

  // The rates' samples: the first one interval after the start.
  void sample_later() {
    sampler_.expires_after(sample_every_);
    sampler_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->closed_) return;
      self->rates_.sample(self->take_snapshot_(), ClassRates::Clock::now());
      self->sample_later();
    });
  }

  void close() {
    closed_ = true;
    error_code ignored;
    acceptor_.close(ignored);
    retry_.cancel();
    sampler_.cancel();
    // Only the file we bound: after a stale-file race it may be another gateway's.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_) {
      ::unlink(path_.c_str());
    }
  }

 private:
  // Answers on the request line, on the client's end of file, or after
  // kStatusRequestWait, whichever comes first.
  void serve(std::shared_ptr<Client> client) {
    client->timer.expires_after(kStatusRequestWait);
    client->timer.async_wait([self = shared_from_this(), client](error_code ec) {
      if (!ec) self->answer(client);
    });
    asio::async_read_until(client->socket, asio::dynamic_buffer(client->request, kMaxRequestBytes), '\n',
                           [self = shared_from_this(), client](error_code, std::size_t) { self->answer(client); });
  }

  void answer(const std::shared_ptr<Client>& client) {
    if (client->answered) return;
    client->answered = true;
    error_code ignored;
    client->timer.cancel();
    client->socket.cancel(ignored);  // the pending read, if any
    if (closed_) {
      client->socket.close(ignored);
      return;
    }
    GatewaySnapshot snapshot = take_snapshot_();
    rates_.fill(snapshot, ClassRates::Clock::now());
    client->text = requested_format(client->request) == StatusFormat::json
                       ? render_status_json(std::move(snapshot), kStatusMaxBytes)
                       : truncated(render_status(snapshot));
    write_reply(client);
  }

  static constexpr std::size_t kMaxRequestBytes = 64;

  local::acceptor acceptor_;
  asio::steady_timer retry_;
  asio::steady_timer sampler_;
  std::chrono::milliseconds sample_every_;
  ClassRates rates_;
  std::string path_;
  std::function<GatewaySnapshot()> take_snapshot_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool closed_ = false;
};

StatusServer::StatusServer(asio::io_context& io, const std::string& path,
                           std::function<GatewaySnapshot()> take_snapshot, std::chrono::milliseconds sample_every)
    : listener_(std::make_shared<Listener>(io, path, std::move(take_snapshot), sample_every)) {
  listener_->open();
  listener_->accept();
  listener_->sample_later();
}

StatusServer::~StatusServer() { listener_->close(); }

StatusReply query_status(const std::string& path, std::chrono::milliseconds timeout, StatusFormat format) {
  StatusReply reply;
  if (auto error = path_error(path)) {
    reply.error = "cannot connect to " + path + ": " + *error;
    return reply;
  }
  asio::io_context io;
  local::socket socket(io);
  bool done = false;
  socket.async_connect(local::endpoint(path), [&](error_code ec) {
    if (ec) {
      using boost::system::errc::errc_t;
      const bool absent = ec == errc_t::no_such_file_or_directory || ec == errc_t::connection_refused;
      const bool denied = ec == errc_t::permission_denied || ec == errc_t::operation_not_permitted;
      reply.error = "cannot connect to " + path + ": " + ec.message() +
                    (absent ? " (is the gateway running?)" : denied ? " (run as the gateway's user)" : "");
      done = true;
      return;
    }
    // The request, then our end of file: the server need not wait for more.
    // A server that closed early shows as a read error or a short reply.
    error_code ignored;
    asio::write(socket, asio::buffer(std::string_view(format == StatusFormat::json ? "json\n" : "text\n")), ignored);
    socket.shutdown(local::socket::shutdown_send, ignored);
    asio::async_read(socket, asio::dynamic_buffer(reply.text, kStatusMaxBytes), [&](error_code ec, std::size_t) {
      if (ec && ec != asio::error::eof) reply.error = "cannot read the status from " + path + ": " + ec.message();
      done = true;
    });
  });
  io.run_for(timeout);
  if (!done) reply.error = "no status from " + path + " within " + std::to_string(timeout.count()) + " ms";
  if (reply.error) reply.text.clear();
  return reply;
}

}  // namespace egw::proxy
