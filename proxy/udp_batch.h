// UdpBatch: the UDP driver's syscalls, without Asio: datagrams queued for
// sendmmsg() and the slots recvmmsg() fills.
//
// Sending. Queued datagrams go out in order with one sendmmsg() per flush.
// The core seals each packet straight into the queue's storage (next_slot(),
// through the driver's TransmitSink::next_buffer), as quinn does: a datagram
// is written once and never copied in user space.
// UDP GSO (Linux 4.18+, UDP_SEGMENT): consecutive datagrams to the same
// address, from the same source, with the same size go out as one message
// that the kernel (or the NIC) cuts into datagrams, so the stack runs once per
// run instead of once per datagram; a shorter datagram ends a run. The
// profile that motivated it: per-datagram sendmsg work was ~60 % of the
// tunnel's CPU. If the kernel refuses GSO, it is switched off.
//
// A full socket buffer (EAGAIN) keeps what was not sent, in order, at the
// front of the queue: send() says `blocked` and the owner waits until the
// socket is writable and sends again. Meanwhile the queue takes up to
// kQueueDatagrams and add() refuses the rest: the only drop a full buffer
// causes, counted by the owner. The bound is what one service round of the
// core may release (the window's free part: ~800 datagrams in the 100 Mbit/s
// test, where a bound of 256 lost more than dropping the batch had), and no
// more than the 8 MB the driver asks the kernel to buffer; the queue's
// storage starts at one batch and grows only when a blocked socket needs it.
//
// Source addresses. A socket bound to 0.0.0.0 or :: on a host with several
// addresses learns, per datagram, the local address it was sent to
// (IP_PKTINFO, IPV6_RECVPKTINFO: enable_pktinfo()); a datagram queued with a
// LocalAddress leaves from it (IP_PKTINFO's ipi_spec_dst, IPV6_PKTINFO), so a
// peer that wrote to one of the host's addresses hears back from that one. A
// source the kernel refuses (the address went away) is dropped from that
// message, which is sent again without it (the kernel chooses, as before),
// and reported (refused_source()) so the owner stops using it.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tunnel/session/peer_address.h"

namespace egw::proxy {

// The local address a datagram arrived at, and so the source of replies.
struct LocalAddress {
  std::array<std::uint8_t, 16> ip{};  // IPv4 as ::ffff:a.b.c.d
  unsigned ifindex = 0;               // the arrival interface: used for IPv6 link-local only
  bool known = false;                 // false: the kernel chooses the source
  bool operator==(const LocalAddress&) const = default;
};

// sockaddr <-> the core's PeerAddress, for both families.
tunnel::session::PeerAddress from_sockaddr(const sockaddr_storage& ss);
socklen_t to_sockaddr(const tunnel::session::PeerAddress& a, int family, sockaddr_storage& ss);

// Asks the kernel for each datagram's local address (see the top).
void enable_pktinfo(int fd, int family);

class UdpBatch {
 public:
  static constexpr std::size_t kSlotBytes = 2048;        // largest datagram either side sends
  static constexpr std::size_t kBatchDatagrams = 64;     // a flush when this many are queued
  static constexpr std::size_t kQueueDatagrams = 64 * kBatchDatagrams;  // while blocked: 8 MB of slots
  static constexpr std::size_t kReceiveSlots = 16;

  UdpBatch();

  std::size_t queued() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Queues a datagram; false (not queued) when the queue is at its bound.
  // A datagram written into next_slot() is queued where it lies (no copy).
  // `urgent`: the tunnel's urgent lane; a GSO run holds one lane's
  // datagrams only, so that the receiver's kernel, which steers a run by its
  // first datagram, can take the lanes apart.
  bool add(const tunnel::session::PeerAddress& to, const LocalAddress& from, int family,
           std::span<const std::byte> datagram, bool urgent = false);
  // Where the next datagram would be queued (kSlotBytes), so its packet can
  // be sealed there; empty when the queue is at its bound. Valid until the
  // next add() or send().
  std::span<std::byte> next_slot();

  enum class SendResult { sent, blocked };
  struct SendCounts {
    std::uint64_t datagrams_sent = 0;
    std::uint64_t errors = 0;  // messages lost to other errors (a late ICMP error)
    std::uint64_t sources_refused = 0;  // messages re-sent without their source
  };
  // Sends the queue in order; on EAGAIN keeps the unsent part and says so.
  SendResult send(int fd, SendCounts& counts);
  // The last source address the kernel refused.
  const LocalAddress& refused_source() const { return refused_source_; }

  // Receives up to kReceiveSlots messages; returns how many (0: nothing waiting).
  int receive(int fd);
  // Message i: one datagram, or with UDP GRO several of segment_bytes(i)
  // each (the last may be shorter), back to back.
  std::span<std::byte> received(int i) {
    return {in_.data() + static_cast<std::size_t>(i) * kReceiveSlotBytes, in_msgs_[i].msg_len};
  }
  std::size_t segment_bytes(int i);
  // The local address message i was sent to (known only with enable_pktinfo()).
  LocalAddress destination(int i);
  bool truncated(int i) const { return (in_msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }
  const sockaddr_storage& sender(int i) const { return in_addr_[i]; }

 private:
  static constexpr std::size_t kMaxSegments = 64;      // UDP_MAX_SEGMENTS is 64 on older kernels
  static constexpr std::size_t kMaxGsoBytes = 65'000;  // one IP datagram's worth
  // UDP GRO hands over up to 64 KB of coalesced datagrams per message.
  static constexpr std::size_t kReceiveSlotBytes = 65'536;
  struct Message {
    tunnel::session::PeerAddress to;
    LocalAddress from;
    std::size_t start = 0;  // in out_ (which may grow and move)
    std::size_t bytes = 0;
    std::size_t segment_bytes = 0;
    std::size_t datagrams = 0;
    bool closed = false;
    bool urgent = false;
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    int family = AF_INET;
    iovec iov{};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint16_t)) + CMSG_SPACE(sizeof(in6_pktinfo))]{};
  };
  bool make_room(std::size_t bytes);
  void prepare(std::size_t i);
  void keep_unsent(std::size_t done);

  std::vector<std::byte> out_;
  std::vector<Message> msgs_;
  std::vector<mmsghdr> hdrs_;
  std::size_t count_ = 0;     // datagrams queued
  std::size_t messages_ = 0;  // messages they form
  std::size_t used_ = 0;      // bytes of out_ in use
  bool gso_ = true;
  LocalAddress refused_source_;

  struct Control {
    alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(in6_pktinfo))];
  };
  std::vector<std::byte> in_;
  std::array<Control, kReceiveSlots> in_control_{};
  std::array<iovec, kReceiveSlots> in_iov_{};
  std::array<mmsghdr, kReceiveSlots> in_msgs_{};
  std::array<sockaddr_storage, kReceiveSlots> in_addr_{};
};

}  // namespace egw::proxy
