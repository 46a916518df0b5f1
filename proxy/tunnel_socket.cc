#include "proxy/tunnel_socket.h"

#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "tunnel/packet_header.h"

namespace egw::proxy {

namespace asio = boost::asio;
using asio::ip::udp;
using tunnel::session::PeerAddress;
using tunnel::session::Session;

namespace {

constexpr std::size_t kSlotBytes = UdpBatch::kSlotBytes;
// Receive batches per wakeup before timers and other sockets get a turn.
constexpr int kMaxBatchesPerWakeup = 16;
// A driver's turn seals at most this many datagrams, then the other ready
// handlers run before it goes on (tunnel/connection_driver.h, "Turns"):
// with the whole window in one turn a request beside a bulk transfer on the
// data-plane bench's veths waited 1.2 ms (p50), each hop behind a turn of
// 150-340 us; with 16, 0.51 ms, 8 streams ~10 % slower; with 8, 0.25-0.38
// ms but 8 streams 20-35 % slower (BENCHMARKS.md, session 36). quinn
// yields after 20.
constexpr std::size_t kDatagramsPerTurn = 16;
// The urgent lane's socket is read before each receive batch and again
// after this many of the batch's datagrams were opened: an urgent datagram
// waits for at most ~64 others plus a message (a GRO run) instead of the
// whole queue; the empty check is one system call (every 16: 4-5 % of a
// core with no shorter wait; only before each batch: waits of 0.3-0.7 ms).
constexpr std::size_t kUrgentCheckDatagrams = 64;

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

// One session: its driver, its timer, and the app's handler.
struct TunnelSocket::Peer final : SessionHandler, tunnel::TransmitSink, tunnel::DriverTimer {
  Peer(TunnelSocket& owner_socket, Session& s)
      : owner(owner_socket),
        session(s),
        timer(owner_socket.io_),
        transmit_buffer(kSlotBytes),
        driver(s, *this, *this, *this, transmit_buffer, turn_limits()) {}

  static tunnel::DriverLimits turn_limits() {
    tunnel::DriverLimits limits;
    limits.datagrams_per_turn = kDatagramsPerTurn;
    return limits;
  }

  // TransmitSink: into the batch, from the address the peer last wrote to.
  // An urgent datagram never shares a GSO run with others, so the peer's
  // kernel can steer it (a run is steered as its first datagram).
  void transmit(std::span<const std::byte> datagram, bool /*low_priority*/) override {
    owner.queue(session.address(), local, datagram, tunnel::is_urgent_datagram(datagram));
  }
  // The packet is sealed in the batch itself (no copy).
  std::span<std::byte> next_buffer() override { return owner.next_slot(); }
  // DriverTimer: one steady_timer; a generation counter drops superseded waits.
  // While the socket is full the timer's work waits with the other services.
  void arm(Instant deadline) override {
    const std::uint64_t g = ++generation;
    timer.expires_at(owner.origin_ + deadline.time_since_epoch());
    timer.async_wait([this, g](const boost::system::error_code& ec) {
      if (ec || g != generation) return;
      if (owner.send_blocked_) {
        timer_fired = true;
        owner.defer(*this);
        return;
      }
      on_timer(owner.now());
    });
  }
  // The turn's budget ran out: the rest after the handlers that are ready
  // now (one resume at a time; none once the socket is gone).
  void resume_soon() override {
    if (resume_posted) return;
    resume_posted = true;
    asio::post(owner.io_, [this, alive = std::weak_ptr<bool>(owner.alive_)] {
      if (alive.expired()) return;
      resume_posted = false;
      owner.resuming_ = true;
      owner.after_service(*this, owner.now());
      owner.resuming_ = false;
    });
  }
  void on_timer(Instant now) {
    timer_fired = false;
    driver.on_timer(now);
    owner.after_service(*this, now);
  }
  // After a datagram the session took: a handshake or an authenticated
  // packet from a new address moves the peer; replies then leave from the
  // address that datagram came to.
  void learn_local(const LocalAddress& to_us) {
    const std::uint64_t handshakes = session.stats().handshakes_completed;
    if (session.address() == known_address && handshakes == known_handshakes) return;
    known_address = session.address();
    known_handshakes = handshakes;
    local = to_us;
  }
  // ConnectionEventHandler: forwarded to the app's handler.
  void on_stream_opened(const tunnel::StreamOpened& e, Instant now) override { app->on_stream_opened(e, now); }
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override { app->on_stream_readable(e, now); }
  void on_stream_writable(const tunnel::StreamWritable& e, Instant now) override { app->on_stream_writable(e, now); }
  void on_stream_reset(const tunnel::StreamReset& e, Instant now) override { app->on_stream_reset(e, now); }
  void on_stream_closed(const tunnel::StreamClosed& e, Instant now) override { app->on_stream_closed(e, now); }
  void on_connection_closed(const tunnel::ConnectionClosed& e, Instant now) override { app->on_connection_closed(e, now); }
  void on_flow_opened(const tunnel::FlowOpened& e, Instant now) override { app->on_flow_opened(e, now); }
  void on_flow_closed(const tunnel::FlowClosed& e, Instant now) override { app->on_flow_closed(e, now); }
  void on_datagram_received(const tunnel::DatagramReceived& e, Instant now) override { app->on_datagram_received(e, now); }

  TunnelSocket& owner;
  Session& session;
  asio::steady_timer timer;
  std::uint64_t generation = 0;
  std::vector<std::byte> transmit_buffer;
  tunnel::BasicConnectionDriver<Session> driver;
  SessionHandler no_handler;
  SessionHandler* app = &no_handler;
  // The source of what we send it (IP_PKTINFO), as of the peer's address
  // and handshake count when it was learnt.
  LocalAddress local;
  PeerAddress known_address;
  std::uint64_t known_handshakes = 0;
  bool resume_posted = false;  // resume_soon's service is queued
  bool deferred = false;     // a service waits for the socket to drain
  bool timer_fired = false;  // ... and its timer's on_timer with it
};

TunnelSocket::TunnelSocket(asio::io_context& io, const tunnel::session::EndpointConfig& config,
                           const udp::endpoint& local, congestion::TemporalCache* cache,
                           std::unique_ptr<tunnel::session::TimestampStore> timestamps)
    : io_(io),
      socket_(io),
      urgent_socket_(io),
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
      batch_(std::make_unique<UdpBatch>()) {
  family_ = local.protocol().family();
  bind_sockets(local);
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
  // A hub bound to every address: learn which one each peer writes to. (An
  // initiator's own route chose the source its hub answers, so it keeps it.)
  if (!config.initiator && local.address().is_unspecified()) enable_pktinfo(fd, family_);
  if (urgent_socket_.is_open()) {
    urgent_socket_.non_blocking(true);
    const int ufd = urgent_socket_.native_handle();
    set_buffer(ufd, SO_RCVBUF, SO_RCVBUFFORCE, 1 << 20);
    // GRO here too: a run of ACKs arrives as one buffer, as on the first socket.
    setsockopt(ufd, SOL_UDP, UDP_GRO, &on, sizeof on);
    if (!config.initiator && local.address().is_unspecified()) enable_pktinfo(ufd, family_);
    urgent_batch_ = std::make_unique<UdpBatch>();
  }
  for (std::size_t i = 0; i < endpoint_.session_count(); ++i) {
    peers_.push_back(std::make_unique<Peer>(*this, endpoint_.session(i)));
    by_session_.emplace(&endpoint_.session(i), peers_.back().get());
  }
  touched_.reserve(peers_.size());
}

TunnelSocket::~TunnelSocket() = default;

// Binds `local`, and the urgent lane's socket beside it when the kernel
// steers (see the top). A port another socket holds fails as before
// ("address in use"): SO_REUSEPORT is set only after a plain bind found
// the port free, so a second gateway never silently joins the group.
void TunnelSocket::bind_sockets(const udp::endpoint& local) {
  if (local.port() != 0) {
    udp::socket probe(io_, local);  // throws, as the plain bind did
  }
  socket_.open(local.protocol());
  const int on = 1;
  const bool reuse = setsockopt(socket_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) == 0;
  socket_.bind(local);
  urgent_lane_error_ = reuse ? open_urgent_lane() : std::string("SO_REUSEPORT: ") + std::strerror(errno);
}

// The second socket joins the first's SO_REUSEPORT group (index 1) and a
// classic BPF program picks each datagram's socket by its first byte.
std::string TunnelSocket::open_urgent_lane() {
  static constexpr std::uint32_t kUrgentType = static_cast<std::uint8_t>(tunnel::PacketType::data_urgent);
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),  // the UDP payload's first byte (too short: returns 0)
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kUrgentType, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 1),  // the urgent lane's socket
      BPF_STMT(BPF_RET | BPF_K, 0),  // the first socket
  };
  sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  boost::system::error_code ec;
  urgent_socket_.open(socket_.local_endpoint().protocol(), ec);
  if (ec) return "urgent lane socket: " + ec.message();
  const int on = 1;
  std::string error;
  if (setsockopt(urgent_socket_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
    error = std::string("SO_REUSEPORT: ") + std::strerror(errno);
  } else if (urgent_socket_.bind(socket_.local_endpoint(), ec); ec) {
    error = "urgent lane bind: " + ec.message();
  } else if (setsockopt(socket_.native_handle(), SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &program,
                        sizeof program) != 0) {
    error = std::string("SO_ATTACH_REUSEPORT_CBPF: ") + std::strerror(errno);
  }
  if (!error.empty()) urgent_socket_.close(ec);  // the group is the first socket alone again
  return error;
}

Instant TunnelSocket::now() const {
  return Instant(std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - origin_));
}

void TunnelSocket::set_handler(std::size_t i, SessionHandler* handler) {
  peers_.at(i)->app = handler ? handler : &peers_.at(i)->no_handler;
}

void TunnelSocket::start() {
  receive();
  if (urgent_socket_.is_open()) receive_urgent();
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
  if (send_blocked_) {  // serviced once the socket drained: nothing to send it with now
    defer(peer);
    return;
  }
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
  // A bulk drain's resumed turns fill the batch (queue() sends it when full)
  // and the last turn sends the rest: a system call per 16 datagrams cost
  // 8 streams ~30 % of their rate. Any other turn (a request's relay, a
  // receive) sends what it sealed at once, behind what the batch held.
  if (resuming_ && peer.resume_posted) return;
  flush();
}

std::span<std::byte> TunnelSocket::next_slot() {
  if (batch_->queued() >= UdpBatch::kBatchDatagrams) flush();  // as queue() would, before the packet is written
  return batch_->next_slot();
}

void TunnelSocket::queue(const PeerAddress& to, const LocalAddress& from, std::span<const std::byte> datagram,
                         bool urgent) {
  if (batch_->queued() >= UdpBatch::kBatchDatagrams) flush();
  if (!batch_->add(to, from, family_, datagram, urgent)) ++stats_.dropped_send_buffer_full;
}

void TunnelSocket::flush() {
  if (send_blocked_ || batch_->empty()) return;
  ++stats_.send_batches;
  UdpBatch::SendCounts counts;
  const UdpBatch::SendResult r = batch_->send(socket_.native_handle(), counts);
  stats_.datagrams_sent += counts.datagrams_sent;
  stats_.send_errors += counts.errors;
  stats_.sources_refused += counts.sources_refused;
  if (counts.sources_refused > 0) {  // an address the host lost: the kernel chooses until the next handshake
    for (auto& p : peers_) {
      if (p->local == batch_->refused_source()) p->local = {};
    }
  }
  if (r == UdpBatch::SendResult::blocked) wait_writable();
}

// The socket buffer is full: the rest of the batch waits in order until the
// kernel has room (no polling), and so do the services that would add to it.
void TunnelSocket::wait_writable() {
  send_blocked_ = true;
  ++stats_.send_blocked;
  socket_.async_wait(udp::socket::wait_write, [this](const boost::system::error_code& ec) {
    if (ec) return;  // closed
    on_writable();
  });
}

void TunnelSocket::on_writable() {
  send_blocked_ = false;
  flush();
  if (send_blocked_) return;  // still full: waiting again
  std::vector<Peer*> waiting;
  waiting.swap(deferred_);
  const Instant t = now();
  for (Peer* p : waiting) {
    p->deferred = false;
    if (p->timer_fired) p->on_timer(t);
    else after_service(*p, t);  // blocked again: it defers itself anew
  }
}

void TunnelSocket::defer(Peer& peer) {
  if (peer.deferred) return;
  peer.deferred = true;
  deferred_.push_back(&peer);
}

void TunnelSocket::receive() {
  socket_.async_wait(udp::socket::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;  // closed
    on_readable();
    receive();
  });
}

void TunnelSocket::receive_urgent() {
  urgent_socket_.async_wait(udp::socket::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;  // closed
    for (int round = 0; round < kMaxBatchesPerWakeup; ++round) {
      if (read_urgent() < static_cast<int>(UdpBatch::kReceiveSlots)) break;
    }
    receive_urgent();
  });
}

// The first socket's batches, with the urgent lane read before each and
// within it (at most one urgent batch at a time: a peer that marks all it
// sends as urgent cannot starve the first socket).
void TunnelSocket::on_readable() {
  for (int round = 0; round < kMaxBatchesPerWakeup; ++round) {
    read_urgent();
    const int n = batch_->receive(socket_.native_handle());
    if (n == 0) break;
    ++stats_.receive_batches;
    Instant t = now();
    std::size_t since_check = 0;
    for (int i = 0; i < n; ++i) {
      since_check += open_message(*batch_, i, t, touched_);
      if (since_check >= kUrgentCheckDatagrams && i + 1 < n && urgent_socket_.is_open()) {
        read_urgent();
        since_check = 0;
        t = now();  // the sessions it serviced have seen this time
      }
    }
    for (Peer* p : touched_) after_service(*p, t);
    touched_.clear();
    flush();
    if (n < static_cast<int>(UdpBatch::kReceiveSlots)) break;
  }
}

int TunnelSocket::read_urgent() {
  if (!urgent_socket_.is_open()) return 0;
  const int n = urgent_batch_->receive(urgent_socket_.native_handle());
  if (n == 0) return 0;
  ++stats_.receive_batches;
  const Instant t = now();
  for (int i = 0; i < n; ++i) stats_.urgent_datagrams_received += open_message(*urgent_batch_, i, t, urgent_touched_);
  for (Peer* p : urgent_touched_) after_service(*p, t);
  urgent_touched_.clear();
  flush();
  return n;
}

std::size_t TunnelSocket::open_message(UdpBatch& from_batch, int i, Instant t, std::vector<Peer*>& touched) {
  if (from_batch.truncated(i)) {
    ++stats_.datagrams_received;
    ++stats_.dropped_truncated;
    return 1;
  }
  std::array<std::byte, kSlotBytes> reply_buffer;
  const PeerAddress from = from_sockaddr(from_batch.sender(i));
  const LocalAddress to_us = from_batch.destination(i);
  const std::span<std::byte> all = from_batch.received(i);
  const std::size_t segment = from_batch.segment_bytes(i);
  std::size_t count = 0;
  for (std::size_t at = 0; at < all.size(); at += segment) {  // GRO: several datagrams
    ++count;
    ++stats_.datagrams_received;
    Session* s = endpoint_.on_datagram(from, all.subspan(at, std::min(segment, all.size() - at)), t);
    // Cookie replies: from the address the initiation came to.
    while (auto r = endpoint_.poll_reply(reply_buffer)) {
      queue(r->to, to_us, std::span(reply_buffer).first(r->bytes));
    }
    if (!s) continue;
    Peer* p = by_session_.at(s);
    p->learn_local(to_us);
    if (std::find(touched.begin(), touched.end(), p) == touched.end()) touched.push_back(p);
  }
  return count;
}

}  // namespace egw::proxy
