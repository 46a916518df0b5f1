// Pacing of every ack-eliciting packet of a congestion domain (RFC 9002 7.7,
// quiche, Linux sch_fq with tcp_pacing_*_ratio): a token bucket of bytes
// filled at the domain's rate.
//
//  - The rate is the law's (WindowLaw::pacing_rate_bytes_per_s) if it gives
//    one, else cwnd / srtt times 2 in slow start (the window doubles per
//    round trip, so the pacer must not be what holds it) and 1.25 after
//    (room for the ACK clock's jitter), Linux's tcp_pacing_ss_ratio /
//    ca_ratio and quiche's. Either way at most the configured WAN rate.
//  - The bucket holds at most max(2 packets, ~1 ms at the rate): small
//    bursts are cheap for the sender and harmless to a queue, and a timer
//    cannot be kept much finer than a millisecond. Idle time is never banked
//    beyond that, except that a domain with nothing in flight may send its
//    initial window at once (quiche's initial burst): a fresh start or a
//    restart after idle has only the window to go by.
//
// Sans-IO: every call takes `now`; the rate is passed in, so the answer is a
// pure function of (state, rate, now).
#pragma once

#include <optional>

#include "common/units.h"

namespace egw::congestion {

class RatePacer {
 public:
  // The bucket's depth for `rate`: max(2 packets, 1 ms at the rate).
  static double burst_bytes(double rate_bytes_per_s, ByteCount max_datagram_bytes);

  // May a packet of `bytes` leave at `now`?
  bool can_send(Instant now, double rate_bytes_per_s, ByteCount bytes,
                ByteCount max_datagram_bytes) const;
  // The earliest instant >= now at which can_send becomes true.
  Instant next_release(Instant now, double rate_bytes_per_s, ByteCount bytes,
                       ByteCount max_datagram_bytes) const;
  void on_sent(Instant now, double rate_bytes_per_s, ByteCount bytes,
               ByteCount max_datagram_bytes);
  // Nothing in flight: the next packets may be a burst of `bytes` (the
  // initial window) whatever the bucket held.
  void allow_burst(Instant now, ByteCount bytes);

 private:
  double tokens_at(Instant now, double rate_bytes_per_s, ByteCount max_datagram_bytes) const;

  double tokens_bytes_ = 0;
  std::optional<Instant> updated_;  // nullopt: a fresh bucket, the first burst is allowed
};

}  // namespace egw::congestion
