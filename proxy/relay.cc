#include "proxy/relay.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

#include "tunnel/error_codes.h"

namespace egw::proxy {

namespace asio = boost::asio;

namespace {
// Socket bytes moved per readiness wakeup before other relays get a turn.
constexpr std::size_t kMaxBytesPerWakeup = 256 * 1024;
// Stream bytes one write turn hands the socket: a stream holding MBs (the
// socket was full meanwhile) went out in one turn of several ms on veths
// (the receiver's TCP runs inline), and every other handler waited.
constexpr std::size_t kMaxBytesPerWriteTurn = 256 * 1024;
// Bytes one recv may put into the stream: as the scratch did (64 KB), so a
// stream's buffer grows no faster than before.
constexpr std::size_t kMaxBytesPerRead = 64 * 1024;
// read_socket_*: the stream had no room (not a socket result).
constexpr ssize_t kStreamFull = -2;
}  // namespace

config::Ip16 ip16_of(const asio::ip::address& address) {
  config::Ip16 out{};
  if (address.is_v6()) {
    const auto b = address.to_v6().to_bytes();
    std::copy(b.begin(), b.end(), out.begin());
  } else {
    const auto b = address.to_v4().to_bytes();
    out[10] = out[11] = 0xff;
    std::copy(b.begin(), b.end(), out.begin() + 12);
  }
  return out;
}

Relay::Relay(RelayOwner& owner, asio::ip::tcp::socket socket, std::size_t session, Side side,
             tunnel::Destination destination, Instant created)
    : owner_(owner),
      socket_(std::move(socket)),
      session_(session),
      side_(side),
      destination_(destination),
      created_(created),
      last_activity_(created) {
  boost::system::error_code ec;
  if (side_ == Side::branch) client_ = socket_.remote_endpoint(ec);
  client_address_ = ip16_of(client_.address());
}

Relay::~Relay() = default;

const char* Relay::state() const {
  if (!stream_started_) return "connecting";
  if (!socket_read_open_ && stream_fin_read_) return "closing";
  if (!socket_read_open_ || stream_fin_read_) return "half-closed";
  return "open";
}

void Relay::set_content_class(ContentClass cls) {
  if (cls == class_) return;
  const std::uint64_t carried = counters_.bytes_to_server + counters_.bytes_to_client;
  bytes_by_earlier_class_[static_cast<std::size_t>(class_)] += carried - bytes_before_class_;
  bytes_before_class_ = carried;
  class_ = cls;
}

std::array<std::uint64_t, kContentClassCount> Relay::bytes_by_class() const {
  auto bytes = bytes_by_earlier_class_;
  bytes[static_cast<std::size_t>(class_)] += counters_.bytes_to_server + counters_.bytes_to_client - bytes_before_class_;
  return bytes;
}

void Relay::start(StreamId id, ContentClass cls) {
  id_ = id;
  set_content_class(cls);
  stream_assigned_ = true;
  stream_started_ = true;
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  // Bytes are relayed as they come; Nagle would hold a small tail for an ACK.
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  pump_socket_to_stream();
  if (!finished_) pump_stream_to_socket();
}

void Relay::on_stream_readable() {
  if (finished_ || !stream_started_ || waiting_writable_ || write_posted_) return;
  pump_stream_to_socket();
}

void Relay::on_stream_writable() {
  if (finished_ || !blocked_on_stream_) return;
  blocked_on_stream_ = false;
  pump_socket_to_stream();
}

void Relay::on_stream_reset(std::uint64_t) {
  if (finished_) return;
  stream_done_ = true;  // the peer reset: nothing to send back on the stream
  reset_socket();
  finish();
}

void Relay::on_stream_closed() {
  if (finished_) return;
  stream_done_ = true;
  maybe_finish();
}

void Relay::on_connection_closed() {
  if (finished_) return;
  stream_done_ = true;
  reset_socket();
  finish();
}

void Relay::close_quietly(std::uint64_t error_code) {
  if (finished_) return;
  if (stream_assigned_ && !stream_done_) {
    if (tunnel::Connection* c = owner_.connection(session_)) {
      c->stream_reset(id_, error_code, owner_.now());
      owner_.service_soon(session_);
    }
  }
  stream_done_ = true;
  if (!socket_read_open_ && !stream_fin_read_) {
    reset_socket();  // its client finished and waits for the rest: a FIN would say "that was all"
  } else {
    boost::system::error_code ec;
    socket_.close(ec);  // nothing unread (nothing_in_flight): a FIN, not an RST
  }
  finish();
}

bool Relay::nothing_in_flight() {
  if (!stream_started_ || finished_ || blocked_on_stream_ || waiting_writable_) return false;
  if (!stream_done_) {
    const tunnel::Connection* c = owner_.connection(session_);
    if (c && c->stream_buffered_bytes(id_) > 0) return false;
  }
  if (!socket_.is_open()) return true;
  int queued = 0;
  if (::ioctl(socket_.native_handle(), SIOCOUTQ, &queued) != 0 || queued > 0) return false;  // not yet acked
  if (::ioctl(socket_.native_handle(), SIOCINQ, &queued) != 0 || queued > 0) return false;   // not yet read
  return true;
}

void Relay::abort(std::uint64_t error_code) {
  if (finished_) return;
  if (stream_assigned_ && !stream_done_) {
    if (tunnel::Connection* c = owner_.connection(session_)) {
      c->stream_reset(id_, error_code, owner_.now());
      owner_.service_soon(session_);
    }
  }
  stream_done_ = true;
  reset_socket();
  finish();
}

// TCP -> stream: no more than the stream takes now, read by the kernel
// straight into the stream's send buffer (no copy of our own). While the
// response is sniffed the bytes go through the scratch, which the owner reads
// as one piece.
void Relay::pump_socket_to_stream() {
  tunnel::Connection* c = owner_.connection(session_);
  if (!c) return on_connection_closed();
  const bool idle = c->stream_buffered_bytes(id_) == 0;  // what it reads starts a burst
  std::size_t moved = 0;
  while (socket_read_open_ && !finished_) {
    if (moved >= kMaxBytesPerWakeup) {  // fairness: come back through the reactor
      wait_readable();
      break;
    }
    const ssize_t n = sniffing_response ? read_socket_via_scratch(*c) : read_socket_into_stream(*c);
    if (n == kStreamFull) {
      blocked_on_stream_ = true;  // StreamWritable resumes
      break;
    }
    if (n > 0) {
      touch();
      counters_.bytes_to_server += side_ == Side::branch ? static_cast<std::size_t>(n) : 0;
      counters_.bytes_to_client += side_ == Side::hub ? static_cast<std::size_t>(n) : 0;
      moved += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {  // EOF: the TCP side finished sending
      socket_read_open_ = false;
      touch();
      c->stream_finish(id_, owner_.now());
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_readable();
      break;
    }
    owner_.service_soon(session_);
    return abort(tunnel::kErrorTcpReset);  // ECONNRESET and friends
  }
  if (moved > 0 && idle) owner_.service_now(session_);
  else if (moved > 0 || !socket_read_open_) owner_.service_soon(session_);
  maybe_finish();
}

// One recv into the stream's buffer (both pieces when it wraps): the bytes
// read, 0 at EOF, -1 with errno, or kStreamFull.
ssize_t Relay::read_socket_into_stream(tunnel::Connection& c) {
  const auto room = c.stream_write_room(id_, kMaxBytesPerRead);
  if (room[0].empty()) return kStreamFull;
  std::array<iovec, 2> iov{iovec{room[0].data(), room[0].size()}, iovec{room[1].data(), room[1].size()}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = room[1].empty() ? 1 : 2;
  const ssize_t n = ::recvmsg(socket_.native_handle(), &msg, MSG_DONTWAIT);
  c.stream_commit_write(id_, n > 0 ? static_cast<std::size_t>(n) : 0, owner_.now());
  return n;
}

ssize_t Relay::read_socket_via_scratch(tunnel::Connection& c) {
  const std::size_t room = c.stream_writable_bytes(id_);
  if (room == 0) return kStreamFull;
  const std::span<std::byte> scratch = owner_.scratch();
  const ssize_t n = ::recv(socket_.native_handle(), scratch.data(), std::min(room, scratch.size()), MSG_DONTWAIT);
  if (n <= 0) return n;
  const auto bytes = scratch.first(static_cast<std::size_t>(n));
  // The response's class first: the write makes the stream a sender, and
  // a sender that joins the ensemble takes its share by its class's
  // tickets (an image joining as `bulk` got 1 ticket instead of 3).
  owner_.on_response_bytes(*this, bytes);
  c.stream_write(id_, bytes, owner_.now());
  return n;
}

// Stream -> TCP: sent straight from the stream's receive buffer; what the
// socket does not take stays there (its receive window pushes back on the
// far side) until the socket is writable.
void Relay::pump_stream_to_socket() {
  tunnel::Connection* c = owner_.connection(session_);
  if (!c) return on_connection_closed();
  bool read_any = false;
  std::size_t turn_bytes = 0;
  while (!stream_fin_read_ && !stream_done_ && !finished_) {
    if (turn_bytes >= kMaxBytesPerWriteTurn) {  // fairness: the rest in a turn of its own
      write_soon();
      break;
    }
    const auto ready = first_bytes(c->stream_peek(id_), kMaxBytesPerWriteTurn - turn_bytes);
    const std::size_t n = ready[0].size() + ready[1].size();
    std::size_t sent = 0;
    if (n > 0) {
      const ssize_t r = send_pieces(ready);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        abort(tunnel::kErrorTcpReset);  // EPIPE, ECONNRESET: the TCP side is gone
        return;
      }
      sent = r > 0 ? static_cast<std::size_t>(r) : 0;
    }
    bool fin = false;
    c->stream_consume(id_, sent, &fin, owner_.now());
    turn_bytes += sent;
    read_any = read_any || sent > 0 || fin;
    if (fin) stream_fin_read_ = true;
    counters_.bytes_to_client += side_ == Side::branch ? sent : 0;
    counters_.bytes_to_server += side_ == Side::hub ? sent : 0;
    if (sent < n) {  // the socket is full: the rest waits in the stream
      wait_writable();
      break;
    }
    if (n == 0) break;
  }
  if (read_any) {
    touch();
    owner_.service_soon(session_);  // credit (MAX_STREAM_DATA) may be due
  }
  if (finished_) return;
  if (stream_fin_read_ && !socket_write_shut_) {
    boost::system::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    socket_write_shut_ = true;
  }
  maybe_finish();
}

ssize_t Relay::send_pieces(const std::array<std::span<const std::byte>, 2>& pieces) {
  std::array<iovec, 2> iov{iovec{const_cast<std::byte*>(pieces[0].data()), pieces[0].size()},
                           iovec{const_cast<std::byte*>(pieces[1].data()), pieces[1].size()}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = pieces[1].empty() ? 1 : 2;
  return ::sendmsg(socket_.native_handle(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void Relay::wait_readable() {
  if (waiting_readable_ || finished_) return;
  waiting_readable_ = true;
  socket_.async_wait(asio::ip::tcp::socket::wait_read,
                     [self = shared_from_this()](const boost::system::error_code& ec) {
                       self->waiting_readable_ = false;
                       if (ec || self->finished_) return;
                       self->pump_socket_to_stream();
                     });
}

void Relay::write_soon() {
  if (write_posted_ || finished_) return;
  write_posted_ = true;
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->write_posted_ = false;
    if (self->finished_ || self->waiting_writable_) return;
    self->pump_stream_to_socket();
  });
}

std::array<std::span<const std::byte>, 2> first_bytes(const std::array<std::span<const std::byte>, 2>& pieces,
                                                      std::size_t max_bytes) {
  const std::size_t a = std::min(pieces[0].size(), max_bytes);
  const std::size_t b = std::min(pieces[1].size(), max_bytes - a);
  return {pieces[0].first(a), pieces[1].first(b)};
}

void Relay::wait_writable() {
  if (waiting_writable_ || finished_) return;
  waiting_writable_ = true;
  socket_.async_wait(asio::ip::tcp::socket::wait_write,
                     [self = shared_from_this()](const boost::system::error_code& ec) {
                       self->waiting_writable_ = false;
                       if (ec || self->finished_) return;
                       self->pump_stream_to_socket();
                     });
}

void Relay::maybe_finish() {
  if (finished_ || !stream_done_) return;
  if (!socket_read_open_ && socket_write_shut_) {
    boost::system::error_code ec;
    socket_.close(ec);
    finish();
  }
}

void Relay::reset_socket() {
  boost::system::error_code ec;
  if (!socket_.is_open()) return;
  socket_.set_option(asio::socket_base::linger(true, 0), ec);  // close() sends RST
  socket_.close(ec);
}

void Relay::finish() {
  if (finished_) return;
  finished_ = true;
  owner_.relay_finished(*this);
}

}  // namespace egw::proxy
