#include "proxy/tunnel_socket.h"

#include <netinet/in.h>
#include <netinet/udp.h>
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
//
// UDP GSO (Linux 4.18+, UDP_SEGMENT): consecutive datagrams to the same
// address with the same size go out as one message that the kernel (or the
// NIC) cuts into datagrams, so the stack runs once per run instead of once
// per datagram; a shorter datagram may end a run. The profile that motivated
// it: per-datagram sendmsg work was ~60 % of the tunnel's CPU. If the kernel
// refuses GSO, it is switched off and datagrams go one per message.
class TunnelSocket::Batch {
 public:
  Batch() : out_(kBatchDatagrams * kSlotBytes), in_(kReceiveSlots * kReceiveSlotBytes) {}
  static constexpr int receive_slots() { return static_cast<int>(kReceiveSlots); }

  bool full() const { return count_ == kBatchDatagrams; }
  bool empty() const { return count_ == 0; }
  void add(const PeerAddress& to, int family, std::span<const std::byte> datagram) {
    std::byte* at = out_.data() + used_;
    std::memcpy(at, datagram.data(), datagram.size());
    used_ += datagram.size();
    ++count_;
    if (messages_ > 0) {
      Message& last = msgs_[messages_ - 1];
      if (gso_ && !last.closed && last.to == to && datagram.size() <= last.segment_bytes &&
          last.datagrams < kMaxSegments && last.bytes + datagram.size() <= kMaxGsoBytes) {
        last.bytes += datagram.size();
        ++last.datagrams;
        last.closed = datagram.size() < last.segment_bytes;  // a short one ends the run
        return;
      }
    }
    Message& m = msgs_[messages_];
    m.to = to;
    m.start = at;
    m.bytes = datagram.size();
    m.segment_bytes = datagram.size();
    m.datagrams = 1;
    m.closed = false;
    m.addr_len = to_sockaddr(to, family, m.addr);
    ++messages_;
  }
  // Sends everything queued; returns datagrams sent, counts errors.
  std::size_t send(int fd, std::uint64_t& errors) {
    for (std::size_t i = 0; i < messages_; ++i) {
      Message& m = msgs_[i];
      m.iov = {m.start, m.bytes};
      mmsghdr& h = hdrs_[i];
      h = {};
      h.msg_hdr.msg_name = &m.addr;
      h.msg_hdr.msg_namelen = m.addr_len;
      h.msg_hdr.msg_iov = &m.iov;
      h.msg_hdr.msg_iovlen = 1;
      if (m.datagrams > 1) {
        h.msg_hdr.msg_control = m.control;
        h.msg_hdr.msg_controllen = sizeof m.control;
        cmsghdr* c = CMSG_FIRSTHDR(&h.msg_hdr);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
        const auto segment = static_cast<std::uint16_t>(m.segment_bytes);
        std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
      }
    }
    std::size_t sent = 0;
    std::size_t done = 0;
    while (done < messages_) {
      const int n = sendmmsg(fd, hdrs_.data() + done, static_cast<unsigned>(messages_ - done), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        // GSO refused (old kernel, no checksum offload): plain datagrams from now on.
        if ((errno == EIO || errno == EINVAL) && msgs_[done].datagrams > 1) gso_ = false;
        // Otherwise EAGAIN (socket buffer full) or a late ICMP error: the
        // datagrams are lost as on the wire; the connection recovers them.
        ++errors;
        ++done;
        continue;
      }
      for (int k = 0; k < n; ++k) sent += msgs_[done + static_cast<std::size_t>(k)].datagrams;
      done += static_cast<std::size_t>(n);
    }
    count_ = 0;
    messages_ = 0;
    used_ = 0;
    return sent;
  }

  // Receives up to kBatchDatagrams; returns how many (0: nothing waiting).
  int receive(int fd) {
    for (std::size_t i = 0; i < kReceiveSlots; ++i) {
      in_iov_[i].iov_base = in_.data() + i * kReceiveSlotBytes;
      in_iov_[i].iov_len = kReceiveSlotBytes;
      in_msgs_[i] = {};
      in_msgs_[i].msg_hdr.msg_name = &in_addr_[i];
      in_msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
      in_msgs_[i].msg_hdr.msg_iov = &in_iov_[i];
      in_msgs_[i].msg_hdr.msg_iovlen = 1;
      in_msgs_[i].msg_hdr.msg_control = in_control_[i].bytes;
      in_msgs_[i].msg_hdr.msg_controllen = sizeof in_control_[i].bytes;
    }
    const int n = recvmmsg(fd, in_msgs_.data(), kReceiveSlots, MSG_DONTWAIT, nullptr);
    return n < 0 ? 0 : n;
  }
  // Message i: one datagram, or with UDP GRO several of segment_bytes(i)
  // each (the last may be shorter), back to back.
  std::span<std::byte> received(int i) {
    return {in_.data() + static_cast<std::size_t>(i) * kReceiveSlotBytes, in_msgs_[i].msg_len};
  }
  std::size_t segment_bytes(int i) {
    msghdr& h = in_msgs_[i].msg_hdr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
        int size = 0;
        std::memcpy(&size, CMSG_DATA(c), sizeof size);
        if (size > 0) return static_cast<std::size_t>(size);
      }
    }
    return in_msgs_[i].msg_len;
  }
  bool truncated(int i) const { return (in_msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }
  const sockaddr_storage& sender(int i) const { return in_addr_[i]; }

 private:
  static constexpr std::size_t kMaxSegments = 64;        // UDP_MAX_SEGMENTS is 64 on older kernels
  static constexpr std::size_t kMaxGsoBytes = 65'000;    // one IP datagram's worth
  struct Message {
    PeerAddress to;
    std::byte* start = nullptr;
    std::size_t bytes = 0;
    std::size_t segment_bytes = 0;
    std::size_t datagrams = 0;
    bool closed = false;
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    iovec iov{};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint16_t))]{};
  };
  std::vector<std::byte> out_;
  std::array<Message, kBatchDatagrams> msgs_{};
  std::array<mmsghdr, kBatchDatagrams> hdrs_{};
  std::size_t count_ = 0;     // datagrams queued
  std::size_t messages_ = 0;  // messages they form
  std::size_t used_ = 0;      // bytes of out_ in use
  bool gso_ = true;
  // UDP GRO hands over up to 64 KB of coalesced datagrams per message.
  static constexpr std::size_t kReceiveSlots = 16;
  static constexpr std::size_t kReceiveSlotBytes = 65'536;
  struct Control {
    alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(int))];
  };
  std::vector<std::byte> in_;
  std::array<Control, kReceiveSlots> in_control_{};
  std::array<iovec, kReceiveSlots> in_iov_{};
  std::array<mmsghdr, kReceiveSlots> in_msgs_{};
  std::array<sockaddr_storage, kReceiveSlots> in_addr_{};
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
                           const udp::endpoint& local, congestion::TemporalCache* cache,
                           std::unique_ptr<tunnel::session::TimestampStore> timestamps)
    : io_(io),
      socket_(io, local),
      origin_(std::chrono::steady_clock::now()),
      timestamps_(std::move(timestamps)),
      endpoint_(
          [&] {
            auto c = config;
            if (timestamps_) c.timestamp_store = timestamps_.get();
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
  // UDP GRO (Linux 5.0+): the kernel hands over runs of same-sized
  // datagrams from one sender as one buffer; a kernel without it simply
  // refuses the option and datagrams arrive one by one.
  const int on = 1;
  setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof on);
  for (std::size_t i = 0; i < endpoint_.session_count(); ++i) {
    peers_.push_back(std::make_unique<Peer>(*this, endpoint_.session(i)));
    by_session_.emplace(&endpoint_.session(i), peers_.back().get());
  }
  touched_.reserve(peers_.size());
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
  std::vector<Peer*>& touched = touched_;  // reused: no allocation per wakeup
  for (int round = 0; round < kMaxBatchesPerWakeup; ++round) {
    const int n = batch_->receive(socket_.native_handle());
    if (n == 0) break;
    ++stats_.receive_batches;
    const Instant t = now();
    for (int i = 0; i < n; ++i) {
      if (batch_->truncated(i)) {
        ++stats_.datagrams_received;
        ++stats_.dropped_truncated;
        continue;
      }
      const PeerAddress from = from_sockaddr(batch_->sender(i));
      const std::span<std::byte> all = batch_->received(i);
      const std::size_t segment = batch_->segment_bytes(i);
      for (std::size_t at = 0; at < all.size(); at += segment) {  // GRO: several datagrams
        ++stats_.datagrams_received;
        Session* s = endpoint_.on_datagram(from, all.subspan(at, std::min(segment, all.size() - at)), t);
        if (!s) continue;
        Peer* p = by_session_.at(s);
        if (std::find(touched.begin(), touched.end(), p) == touched.end()) touched.push_back(p);
      }
    }
    std::array<std::byte, kSlotBytes> reply_buffer;
    while (auto r = endpoint_.poll_reply(reply_buffer)) {
      if (batch_->full()) flush();
      batch_->add(r->to, family_, std::span(reply_buffer).first(r->bytes));
    }
    for (Peer* p : touched) after_service(*p, t);
    touched.clear();
    flush();
    if (n < Batch::receive_slots()) break;
  }
}

}  // namespace egw::proxy
