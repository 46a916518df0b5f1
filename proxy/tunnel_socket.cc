#include "proxy/tunnel_socket.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

namespace egw::proxy {

namespace asio = boost::asio;
using asio::ip::udp;
using tunnel::session::PeerAddress;
using tunnel::session::Session;

namespace {

// Largest datagram either side may send (TransportParameters caps it lower).
constexpr std::size_t kSlotBytes = 2048;
constexpr std::size_t kBatchDatagrams = 64;
// Receive batches per wakeup before timers and other sockets get a turn.
constexpr int kMaxBatchesPerWakeup = 16;

// sockaddr <-> PeerAddress, for both families.
PeerAddress from_sockaddr(const sockaddr_storage& ss) {
  PeerAddress a;
  if (ss.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(ss);
    a.ip[10] = a.ip[11] = 0xff;
    std::memcpy(a.ip.data() + 12, &in.sin_addr, 4);
    a.port = ntohs(in.sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(ss);
    std::memcpy(a.ip.data(), &in6.sin6_addr, 16);
    a.port = ntohs(in6.sin6_port);
  }
  return a;
}

socklen_t to_sockaddr(const PeerAddress& a, int family, sockaddr_storage& ss) {
  std::memset(&ss, 0, sizeof ss);
  if (family == AF_INET) {
    auto& in = reinterpret_cast<sockaddr_in&>(ss);
    in.sin_family = AF_INET;
    std::memcpy(&in.sin_addr, a.ip.data() + 12, 4);
    in.sin_port = htons(a.port);
    return sizeof in;
  }
  auto& in6 = reinterpret_cast<sockaddr_in6&>(ss);
  in6.sin6_family = AF_INET6;
  std::memcpy(&in6.sin6_addr, a.ip.data(), 16);
  in6.sin6_port = htons(a.port);
  return sizeof in6;
}

void set_buffer(int fd, int option, int force_option, int bytes) {
  // As root, *BUFFORCE passes net.core.{r,w}mem_max; otherwise the capped size.
  if (setsockopt(fd, SOL_SOCKET, force_option, &bytes, sizeof bytes) != 0) {
    setsockopt(fd, SOL_SOCKET, option, &bytes, sizeof bytes);
  }
}

}  // namespace

PeerAddress to_peer_address(const udp::endpoint& e) {
  sockaddr_storage ss{};
  std::memcpy(&ss, e.data(), e.size());
  return from_sockaddr(ss);
}

udp::endpoint to_udp_endpoint(const PeerAddress& a) {
  if (a.is_v4()) {
    asio::ip::address_v4::bytes_type b;
    std::memcpy(b.data(), a.ip.data() + 12, 4);
    return {asio::ip::address_v4(b), a.port};
  }
  asio::ip::address_v6::bytes_type b;
  std::memcpy(b.data(), a.ip.data(), 16);
  return {asio::ip::address_v6(b), a.port};
}

// Datagrams waiting for one sendmmsg(), and the receive side's recvmmsg() slots.
class TunnelSocket::Batch {
 public:
  Batch() : out_(kBatchDatagrams * kSlotBytes), in_(kBatchDatagrams * kSlotBytes) {}

  bool full() const { return count_ == kBatchDatagrams; }
  bool empty() const { return count_ == 0; }
  void add(const PeerAddress& to, int family, std::span<const std::byte> datagram) {
    std::memcpy(out_.data() + count_ * kSlotBytes, datagram.data(), datagram.size());
    iovec& iov = out_iov_[count_];
    iov.iov_base = out_.data() + count_ * kSlotBytes;
    iov.iov_len = datagram.size();
    mmsghdr& m = out_msgs_[count_];
    m = {};
    m.msg_hdr.msg_name = &out_addr_[count_];
    m.msg_hdr.msg_namelen = to_sockaddr(to, family, out_addr_[count_]);
    m.msg_hdr.msg_iov = &iov;
    m.msg_hdr.msg_iovlen = 1;
    ++count_;
  }
  // Sends everything queued; returns datagrams sent, counts errors.
  std::size_t send(int fd, std::uint64_t& errors) {
    std::size_t sent = 0;
    while (sent < count_) {
      const int n = sendmmsg(fd, out_msgs_.data() + sent, static_cast<unsigned>(count_ - sent), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        // EAGAIN (socket buffer full) or an ICMP error reported late: the
        // datagram is lost like on the wire; the connection recovers it.
        ++errors;
        ++sent;
        continue;
      }
      sent += static_cast<std::size_t>(n);
    }
    count_ = 0;
    return sent;
  }

  // Receives up to kBatchDatagrams; returns how many (0: nothing waiting).
  int receive(int fd) {
    for (std::size_t i = 0; i < kBatchDatagrams; ++i) {
      in_iov_[i].iov_base = in_.data() + i * kSlotBytes;
      in_iov_[i].iov_len = kSlotBytes;
      in_msgs_[i] = {};
      in_msgs_[i].msg_hdr.msg_name = &in_addr_[i];
      in_msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
      in_msgs_[i].msg_hdr.msg_iov = &in_iov_[i];
      in_msgs_[i].msg_hdr.msg_iovlen = 1;
    }
    const int n = recvmmsg(fd, in_msgs_.data(), kBatchDatagrams, MSG_DONTWAIT, nullptr);
    return n < 0 ? 0 : n;
  }
  std::span<std::byte> received(int i) {
    return {in_.data() + static_cast<std::size_t>(i) * kSlotBytes, in_msgs_[i].msg_len};
  }
  bool truncated(int i) const { return (in_msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }
  const sockaddr_storage& sender(int i) const { return in_addr_[i]; }

 private:
  std::vector<std::byte> out_;
  std::array<iovec, kBatchDatagrams> out_iov_{};
  std::array<mmsghdr, kBatchDatagrams> out_msgs_{};
  std::array<sockaddr_storage, kBatchDatagrams> out_addr_{};
  std::size_t count_ = 0;
  std::vector<std::byte> in_;
  std::array<iovec, kBatchDatagrams> in_iov_{};
  std::array<mmsghdr, kBatchDatagrams> in_msgs_{};
  std::array<sockaddr_storage, kBatchDatagrams> in_addr_{};
};

// One session: its driver, its timer, and the app's handler.
struct TunnelSocket::Peer final : SessionHandler, tunnel::TransmitSink, tunnel::DriverTimer {
  Peer(TunnelSocket& owner_socket, Session& s)
      : owner(owner_socket),
        session(s),
        timer(owner_socket.io_),
        transmit_buffer(kSlotBytes),
        driver(s, *this, *this, *this, transmit_buffer) {}

  // TransmitSink: into the batch, flushed when full.
  void transmit(std::span<const std::byte> datagram, bool /*low_priority*/) override {
    if (owner.batch_->full()) owner.flush();
    owner.batch_->add(session.address(), owner.family_, datagram);
  }
  // DriverTimer: one steady_timer; a generation counter drops superseded waits.
  void arm(Instant deadline) override {
    const std::uint64_t g = ++generation;
    timer.expires_at(owner.origin_ + deadline.time_since_epoch());
    timer.async_wait([this, g](const boost::system::error_code& ec) {
      if (ec || g != generation) return;
      const Instant now = owner.now();
      driver.on_timer(now);
      owner.after_service(*this, now);
    });
  }
  // ConnectionEventHandler: forwarded to the app's handler.
  void on_stream_opened(const tunnel::StreamOpened& e, Instant now) override { app->on_stream_opened(e, now); }
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override { app->on_stream_readable(e, now); }
  void on_stream_writable(const tunnel::StreamWritable& e, Instant now) override { app->on_stream_writable(e, now); }
  void on_stream_reset(const tunnel::StreamReset& e, Instant now) override { app->on_stream_reset(e, now); }
  void on_stream_closed(const tunnel::StreamClosed& e, Instant now) override { app->on_stream_closed(e, now); }
  void on_connection_closed(const tunnel::ConnectionClosed& e, Instant now) override { app->on_connection_closed(e, now); }

  TunnelSocket& owner;
  Session& session;
  asio::steady_timer timer;
  std::uint64_t generation = 0;
  std::vector<std::byte> transmit_buffer;
  tunnel::BasicConnectionDriver<Session> driver;
  SessionHandler no_handler;
  SessionHandler* app = &no_handler;
};

TunnelSocket::TunnelSocket(asio::io_context& io, const tunnel::session::EndpointConfig& config,
                           const udp::endpoint& local, congestion::TemporalCache* cache)
    : io_(io),
      socket_(io, local),
      origin_(std::chrono::steady_clock::now()),
      endpoint_(
          [&] {
            auto c = config;
            c.wall_clock_ns_at_origin = static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count());
            return c;
          }(),
          cache, Instant{}),
      batch_(std::make_unique<Batch>()) {
  family_ = local.protocol().family();
  socket_.non_blocking(true);
  const int fd = socket_.native_handle();
  set_buffer(fd, SO_RCVBUF, SO_RCVBUFFORCE, 8 << 20);
  set_buffer(fd, SO_SNDBUF, SO_SNDBUFFORCE, 8 << 20);
  // DF set, the kernel's path MTU cache ignored: datagram sizes are the
  // core's business (it starts at 1200 bytes, which every path carries).
  const int pmtu = IP_PMTUDISC_PROBE;
  if (family_ == AF_INET) setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  else setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu);
  for (std::size_t i = 0; i < endpoint_.session_count(); ++i) {
    peers_.push_back(std::make_unique<Peer>(*this, endpoint_.session(i)));
    by_session_.emplace(&endpoint_.session(i), peers_.back().get());
  }
}

TunnelSocket::~TunnelSocket() = default;

Instant TunnelSocket::now() const {
  return Instant(std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - origin_));
}

void TunnelSocket::set_handler(std::size_t i, SessionHandler* handler) {
  peers_.at(i)->app = handler ? handler : &peers_.at(i)->no_handler;
}

void TunnelSocket::start() {
  receive();
  for (std::size_t i = 0; i < peers_.size(); ++i) connect(i);
}

void TunnelSocket::connect(std::size_t i) {
  Peer& peer = *peers_.at(i);
  const Instant t = now();
  peer.session.connect(t);  // a no-op for the responder
  after_service(peer, t);
}

void TunnelSocket::service(std::size_t i) {
  Peer& peer = *peers_.at(i);
  if (peer.driver.in_service()) {  // from inside a handler: one more round
    peer.driver.service(now());
    return;
  }
  after_service(peer, now());
}

void TunnelSocket::after_service(Peer& peer, Instant now) {
  for (;;) {
    peer.driver.service(now);
    bool any = false;
    while (auto e = peer.session.poll_session_event()) {
      any = true;
      if (std::holds_alternative<tunnel::session::SessionUp>(*e)) {
        peer.app->on_session_up(peer.session, now);
      } else {
        peer.app->on_session_down(peer.session, std::get<tunnel::session::SessionDown>(*e).reason, now);
      }
    }
    if (!any) break;
  }
  flush();
}

void TunnelSocket::flush() {
  if (batch_->empty()) return;
  ++stats_.send_batches;
  stats_.datagrams_sent += batch_->send(socket_.native_handle(), stats_.send_errors);
}

void TunnelSocket::receive() {
  socket_.async_wait(udp::socket::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;  // closed
    on_readable();
    receive();
  });
}

void TunnelSocket::on_readable() {
  std::vector<Peer*> touched;  // few peers: a vector beats a set
  for (int round = 0; round < kMaxBatchesPerWakeup; ++round) {
    const int n = batch_->receive(socket_.native_handle());
    if (n == 0) break;
    ++stats_.receive_batches;
    const Instant t = now();
    for (int i = 0; i < n; ++i) {
      ++stats_.datagrams_received;
      if (batch_->truncated(i)) {
        ++stats_.dropped_truncated;
        continue;
      }
      Session* s = endpoint_.on_datagram(from_sockaddr(batch_->sender(i)), batch_->received(i), t);
      if (!s) continue;
      Peer* p = by_session_.at(s);
      if (std::find(touched.begin(), touched.end(), p) == touched.end()) touched.push_back(p);
    }
    std::array<std::byte, kSlotBytes> reply_buffer;
    while (auto r = endpoint_.poll_reply(reply_buffer)) {
      if (batch_->full()) flush();
      batch_->add(r->to, family_, std::span(reply_buffer).first(r->bytes));
    }
    for (Peer* p : touched) after_service(*p, t);
    touched.clear();
    flush();
    if (n < static_cast<int>(kBatchDatagrams)) break;
  }
}

}  // namespace egw::proxy
