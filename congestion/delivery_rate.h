// Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation,
// Linux tcp_rate.c, quiche's delivery_rate.rs), for one congestion domain.
//
// At send, each packet takes a snapshot of the domain's delivery counters
// (how many bytes had been delivered, and when). When it is acknowledged,
//   delivered bytes  = delivered now - delivered in its snapshot
//   interval         = max(send interval, ack interval)
//   send interval    = its send time - the send time of the packet delivered
//                      last when it left (the snapshot's first_sent_time)
//   ack interval     = now - the snapshot's delivered_time
// and the rate is their quotient. Taking the longer interval keeps the rate
// honest both when acks are compressed (aggregation: a short ack interval)
// and when sends were bunched (a short send interval). An interval shorter
// than the minimum RTT is not trusted (tcp_rate.c): the sample is invalid.
//
// With the peer's clock (its ACK timestamps, congestion/ack_path_meter.h)
// the ack interval is taken where the data arrived: the peer's receive time
// of this ack's largest packet minus its receive time of the ack that set the
// snapshot's delivered count. Acks that waited behind an upload on a slow
// uplink come in bunches, and the sender's clock read a 4 Mbit/s downlink at
// 4.5-4.8 Mbit/s (the simulator's asymmetric line): the window over the
// ACK path's delay then kept ~50 ms of queue on the downlink. The interval
// stays the longer of send and ack intervals; without a stamp for the
// snapshot's ack (none yet, or older than the last kPeerTimes acks, or an
// interval that began empty) the sender's clock is used.
//
// Application-limited marking: when the sender had nothing to send while the
// window was open, the packets sent until that bubble is acknowledged carry
// is_app_limited; their (low) rate samples may raise a max filter but must
// not lower the model.
//
// Rounds: a round trip ends when a packet sent after the previous round
// ended is acknowledged (BBR's delivered-count rounds), whatever the clock.
//
// Sans-IO: callers pass `now`; no allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "common/ring_deque.h"
#include "common/units.h"
#include "congestion/packet.h"

namespace egw::congestion {

// What a rate sample says about the ack (or batch of acks) that produced it.
struct RateSample {
  double delivery_rate_bytes_per_s = 0;  // 0 when !valid
  bool valid = false;                     // interval long enough to trust
  Duration interval{0};
  ByteCount delivered_bytes = 0;        // over the interval
  ByteCount prior_delivered_bytes = 0;  // the snapshot's counter
  bool is_app_limited = false;
  std::optional<Duration> rtt;  // of the newest packet acknowledged here
  // Of that RTT, how long this ACK waited in a queue on its way back
  // (congestion/ack_path_meter.h); nullopt when the peer does not stamp ACKs.
  std::optional<Duration> ack_path_delay;
  bool round_start = false;     // this ack ended a round trip
  std::uint64_t round_count = 0;
  ByteCount acked_bytes = 0;      // newly acknowledged by this ack
  ByteCount lost_bytes = 0;       // declared lost together with this ack
  ByteCount prior_in_flight = 0;  // bytes in flight before this ack
};

class DeliveryRateSampler {
 public:
  // At send (before the packet is counted in flight): its snapshot.
  // `bytes_in_flight` is the flight before this packet (0: a new interval).
  DeliverySnapshot on_packet_sent(ByteCount bytes_in_flight, Instant now);

  // The sender had nothing to send with the window open: every packet until
  // the current flight is delivered is app-limited. `bytes_in_flight` now.
  void on_app_limited(ByteCount bytes_in_flight);
  bool app_limited() const { return app_limited_until_ > 0; }

  // One ack: the packets it newly acknowledged (with their snapshots) and
  // those declared lost with it; `prior_in_flight` the flight before it.
  // `peer_received_at`: the peer's clock when it received this ack's
  // largest packet (its stamp minus its ack delay), when it stamps ACKs.
  RateSample on_ack(std::span<const SentPacket> acked, std::span<const SentPacket> lost,
                    ByteCount prior_in_flight, Instant now, Duration min_rtt,
                    std::optional<Duration> peer_received_at = std::nullopt);
  // Losses outside an ack (loss timer, RTO): counted, no sample.
  void on_lost(ByteCount lost_bytes) { lost_total_ += lost_bytes; }

  ByteCount delivered_bytes() const { return delivered_; }
  ByteCount lost_bytes() const { return lost_total_; }
  // What the packet's snapshot says had been delivered when it left.
  ByteCount delivered_at_send(const SentPacket& p) const;
  std::uint64_t round_count() const { return round_count_; }

 private:
  ByteCount delivered_ = 0;
  ByteCount lost_total_ = 0;
  Instant delivered_time_{};
  Instant first_sent_time_{};
  bool started_ = false;
  ByteCount app_limited_until_ = 0;  // delivered count; 0 = not app-limited
  ByteCount next_round_delivered_ = 0;
  std::uint64_t round_count_ = 0;

  // The peer's receive times of recent acks, by the delivered count each
  // ack left (ascending); cleared when an interval begins empty.
  struct PeerTime {
    ByteCount delivered = 0;
    Duration received_at{0};
  };
  static constexpr std::size_t kPeerTimes = 512;
  RingDeque<PeerTime> peer_times_;
  std::optional<Duration> peer_time_at(ByteCount delivered) const;
};

}  // namespace egw::congestion
