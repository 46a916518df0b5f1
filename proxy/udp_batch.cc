#include "proxy/udp_batch.h"

#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace egw::proxy {

using tunnel::session::PeerAddress;

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

void enable_pktinfo(int fd, int family) {
  const int on = 1;
  // A dual-stack IPv6 socket reports IPv4 arrivals as v4-mapped IPV6_PKTINFO.
  if (family == AF_INET) setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on);
  else setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on);
}

UdpBatch::UdpBatch()
    : out_(kBatchDatagrams * kSlotBytes),
      msgs_(kBatchDatagrams),
      hdrs_(kBatchDatagrams),
      in_(kReceiveSlots * kReceiveSlotBytes) {}

// Room for one more datagram (and message): the storage doubles up to the
// bound, which only a blocked socket reaches (a flush comes at one batch).
bool UdpBatch::make_room(std::size_t bytes) {
  if (count_ == kQueueDatagrams || bytes > kSlotBytes) return false;
  if (used_ + bytes > out_.size()) out_.resize(std::min(2 * out_.size(), kQueueDatagrams * kSlotBytes));
  if (messages_ == msgs_.size()) {
    msgs_.resize(std::min(2 * msgs_.size(), kQueueDatagrams));
    hdrs_.resize(msgs_.size());
  }
  return used_ + bytes <= out_.size();
}

bool UdpBatch::add(const PeerAddress& to, const LocalAddress& from, int family,
                   std::span<const std::byte> datagram, bool urgent) {
  const bool in_place = datagram.data() == out_.data() + used_;  // sealed in next_slot()
  if (!make_room(datagram.size())) return false;
  const std::size_t at = used_;
  if (!in_place) std::memcpy(out_.data() + at, datagram.data(), datagram.size());
  used_ += datagram.size();
  ++count_;
  if (messages_ > 0) {
    Message& last = msgs_[messages_ - 1];
    if (gso_ && !last.closed && last.urgent == urgent && last.to == to && last.from == from &&
        datagram.size() <= last.segment_bytes && last.datagrams < kMaxSegments && last.bytes + datagram.size() <= kMaxGsoBytes) {
      last.bytes += datagram.size();
      ++last.datagrams;
      last.closed = datagram.size() < last.segment_bytes;  // a short one ends the run
      return true;
    }
  }
  Message& m = msgs_[messages_];
  m.to = to;
  m.from = from;
  m.start = at;
  m.bytes = datagram.size();
  m.segment_bytes = datagram.size();
  m.datagrams = 1;
  m.closed = false;
  m.urgent = urgent;
  m.family = family;
  m.addr_len = to_sockaddr(to, family, m.addr);
  ++messages_;
  return true;
}

std::span<std::byte> UdpBatch::next_slot() {
  if (!make_room(kSlotBytes)) return {};
  return {out_.data() + used_, kSlotBytes};
}

// Message i's header: its address, its bytes, GSO's segment size, its source.
void UdpBatch::prepare(std::size_t i) {
  Message& m = msgs_[i];
  m.iov = {out_.data() + m.start, m.bytes};
  mmsghdr& h = hdrs_[i];
  h = {};
  h.msg_hdr.msg_name = &m.addr;
  h.msg_hdr.msg_namelen = m.addr_len;
  h.msg_hdr.msg_iov = &m.iov;
  h.msg_hdr.msg_iovlen = 1;
  if (m.datagrams == 1 && !m.from.known) return;
  h.msg_hdr.msg_control = m.control;
  h.msg_hdr.msg_controllen = sizeof m.control;
  cmsghdr* c = CMSG_FIRSTHDR(&h.msg_hdr);
  std::size_t length = 0;
  if (m.datagrams > 1) {
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
    const auto segment = static_cast<std::uint16_t>(m.segment_bytes);
    std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
    length += CMSG_SPACE(sizeof segment);
    c = CMSG_NXTHDR(&h.msg_hdr, c);
  }
  if (m.from.known) {
    if (m.family == AF_INET) {
      in_pktinfo info{};
      std::memcpy(&info.ipi_spec_dst, m.from.ip.data() + 12, 4);
      c->cmsg_level = IPPROTO_IP;
      c->cmsg_type = IP_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof info);
      std::memcpy(CMSG_DATA(c), &info, sizeof info);
      length += CMSG_SPACE(sizeof info);
    } else {
      in6_pktinfo info{};
      std::memcpy(&info.ipi6_addr, m.from.ip.data(), 16);
      // Only a link-local source needs its interface; otherwise routing chooses.
      if (IN6_IS_ADDR_LINKLOCAL(&info.ipi6_addr)) info.ipi6_ifindex = m.from.ifindex;
      c->cmsg_level = IPPROTO_IPV6;
      c->cmsg_type = IPV6_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof info);
      std::memcpy(CMSG_DATA(c), &info, sizeof info);
      length += CMSG_SPACE(sizeof info);
    }
  }
  h.msg_hdr.msg_controllen = length;
}

// After EAGAIN at message `done`: the unsent messages and their bytes move
// to the front, in order, and stay queued.
void UdpBatch::keep_unsent(std::size_t done) {
  if (done == 0) return;
  const std::size_t offset = msgs_[done].start;
  std::memmove(out_.data(), out_.data() + offset, used_ - offset);
  used_ -= offset;
  std::size_t left = 0;
  for (std::size_t i = done; i < messages_; ++i) {
    msgs_[i - done] = msgs_[i];
    msgs_[i - done].start -= offset;
    left += msgs_[i].datagrams;
  }
  messages_ -= done;
  count_ = left;
}

UdpBatch::SendResult UdpBatch::send(int fd, SendCounts& counts) {
  for (std::size_t i = 0; i < messages_; ++i) prepare(i);
  std::size_t done = 0;
  while (done < messages_) {
    const int n = sendmmsg(fd, hdrs_.data() + done, static_cast<unsigned>(messages_ - done), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        keep_unsent(done);
        return SendResult::blocked;
      }
      Message& m = msgs_[done];
      // A source the host no longer has: the same message, the kernel's source.
      if ((errno == EINVAL || errno == EADDRNOTAVAIL) && m.from.known) {
        refused_source_ = m.from;
        ++counts.sources_refused;
        m.from.known = false;
        prepare(done);
        continue;
      }
      // GSO refused (old kernel, no checksum offload): plain datagrams from now on.
      if ((errno == EIO || errno == EINVAL) && m.datagrams > 1) gso_ = false;
      // Otherwise a late ICMP error: the datagrams are lost as on the wire;
      // the connection recovers them.
      ++counts.errors;
      ++done;
      continue;
    }
    for (int k = 0; k < n; ++k) counts.datagrams_sent += msgs_[done + static_cast<std::size_t>(k)].datagrams;
    done += static_cast<std::size_t>(n);
  }
  count_ = 0;
  messages_ = 0;
  used_ = 0;
  return SendResult::sent;
}

int UdpBatch::receive(int fd) {
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

std::size_t UdpBatch::segment_bytes(int i) {
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

LocalAddress UdpBatch::destination(int i) {
  LocalAddress a;
  msghdr& h = in_msgs_[i].msg_hdr;
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      a.ip[10] = a.ip[11] = 0xff;
      // ipi_spec_dst: the local address (ipi_addr would be a broadcast's).
      std::memcpy(a.ip.data() + 12, &info.ipi_spec_dst, 4);
      a.ifindex = static_cast<unsigned>(info.ipi_ifindex);
      a.known = true;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      std::memcpy(a.ip.data(), &info.ipi6_addr, 16);
      a.ifindex = info.ipi6_ifindex;
      a.known = !IN6_IS_ADDR_MULTICAST(&info.ipi6_addr);
    }
  }
  return a;
}

}  // namespace egw::proxy
