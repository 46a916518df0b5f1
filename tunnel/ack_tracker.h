// AckTracker: the receive side's memory of packet numbers, sans-IO.
//
// Three jobs, all bounded in memory:
//  1. Anti-replay (RFC 6479, as in wireguard-go's replay.go): a ring bitmap
//     of kReplayWindowPackets numbers below the largest received. A number
//     seen before, or too far below the largest, is refused. The ring is
//     independent of the ACK ranges, so forgetting ranges never lets a
//     duplicate back in.
//  2. What to acknowledge: received numbers as inclusive ranges, newest
//     first, at most kMaxAckRanges (the oldest range is dropped beyond that;
//     the peer then declares those packets lost and retransmits, which stream
//     reassembly absorbs). Ranges below an ACK the peer has acknowledged are
//     forgotten (RFC 9000 section 13.2.4).
//  3. When to acknowledge (RFC 9000 section 13.2.1-13.2.2): an ACK is owed
//     once an ack-eliciting packet arrives; it is due at once after
//     `ack_every_packets` ack-eliciting packets, or when one arrives out of
//     order (below the largest, or above it leaving a gap); otherwise at the
//     latest max_ack_delay after the first unacknowledged ack-eliciting packet.
//  4. Decimation, when configured (issue 20; Chromium's ACK decimation, the
//     policy draft-ietf-quic-ack-frequency lets a sender ask for): every
//     second packet is one ACK datagram per two data packets, 13-17 % of a
//     1 Mbit/s uplink under a 4 Mbit/s download. Past startup (the first
//     `decimation_after_packets` ack-eliciting packets, and again after a
//     silence), an ACK is due after `threshold` packets, a count measured
//     from the arrival rate since the previous ACK so that it is about a
//     quarter of the path's RTT of packets (at least ack_every_packets, at most
//     `decimation_max_packets`), and the timer is min(max_ack_delay,
//     min RTT / 4): at least ~4 ACKs per RTT whatever the rate, so a sender
//     limited by its window never waits long for one. Loss stays as quick
//     to see: a gap makes the ACK immediate, and so do the next
//     kQuickAckPackets packets after it (Linux's quickack), so the sender
//     has the 3 packets past a hole that declare it lost in the same round.
//     The sender needs no new parameter: every ACK still comes within the
//     max_ack_delay it was told, which its PTO allows for, and the ACK delay
//     it reports keeps RTT samples exact (the model law's window holds the
//     stride it sees: congestion/model_law_ack_path.cc). Off by default: a
//     sparser ACK clock releases the sender's joins and credit in bigger
//     steps; the gateway turns it on where max_rate.up is set, or where this
//     side's ACKs take a measured share of its own busy uplink
//     (AckShareMeter).
//
// Use: after a datagram authenticates, on_packet_received(); if it returns
// false, drop the packet as a duplicate. Send an ACK when
// now >= ack_deadline(); put ack_frame(now, room) in it; then on_ack_sent().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/units.h"
#include "tunnel/frames.h"

namespace egw::tunnel {

struct AckTrackerConfig {
  Duration max_ack_delay = ms(25);
  std::uint32_t ack_every_packets = 2;  // ack-eliciting packets per immediate ACK
  // Decimation (see above); false: ack_every_packets and max_ack_delay always.
  bool decimation = false;
  std::uint32_t decimation_max_packets = 10;     // Chromium's stretch
  std::uint32_t decimation_after_packets = 100;  // startup, as Chromium
};

class AckTracker {
 public:
  // 129 blocks of 64 bits; one block is always being recycled, so
  // (129 - 1) * 64 = 8192 numbers below the largest stay checkable
  // (WireGuard's window, RFC 6479).
  static constexpr std::size_t kReplayBlocks = 129;
  static constexpr std::size_t kReplayWindowPackets = (kReplayBlocks - 1) * 64;

  // Packets just past a gap acknowledged at once (the sender's packet
  // threshold, RFC 9002 section 6.1.1).
  static constexpr std::uint64_t kQuickAckPackets = 3;

  explicit AckTracker(const AckTrackerConfig& config)
      : config_(config), threshold_(config.ack_every_packets) {}

  // Would on_packet_received() accept `number`? (A cheap pre-check; it does
  // not record anything.) False for duplicates, numbers at least
  // kReplayWindowPackets below the largest, and numbers > 2^62 - 1.
  bool is_new(PacketNumber number) const;

  // Records an authenticated packet; false (nothing recorded) when !is_new().
  bool on_packet_received(PacketNumber number, bool ack_eliciting, Instant now);

  // When the owed ACK must be sent (a time <= now means at once), or nullopt
  // when no ack-eliciting packet awaits acknowledgement.
  std::optional<Instant> ack_deadline() const;
  // Any packet (ack-eliciting or not) received since the last ACK: worth
  // piggybacking an ACK on a packet sent anyway.
  bool has_unacked_packets() const { return unacked_packets_; }

  // The ACK to send at `now`: the newest ranges that fit in `budget_bytes`
  // (see fit_ack_frame), ack_delay = now - receive time of its largest
  // number. nullopt when there is nothing to acknowledge or it does not fit.
  // `timestamp`: an ACK_TIMESTAMPED frame that carries it.
  std::optional<AckFrame> ack_frame(Instant now, std::size_t budget_bytes,
                                    std::optional<Duration> timestamp = std::nullopt) const;
  // An ACK frame left in a packet at `now`: the owed ACK is paid.
  void on_ack_sent(Instant now);
  // An RTT sample of the path (our packet's send to its ACK): the smallest
  // bounds the decimated ACK timer to a quarter of it.
  void on_rtt_sample(Duration rtt);
  // Ack-eliciting packets per ACK now (ack_every_packets in startup).
  std::uint32_t ack_threshold() const;
  // Decimation on or off from now on (AckShareMeter decides under `auto`).
  void set_decimation(bool on) { config_.decimation = on; }
  bool decimation() const { return config_.decimation; }
  // The peer acknowledged a packet of ours whose ACK frame had this largest
  // number: stop reporting numbers <= it (RFC 9000 section 13.2.4).
  void on_ack_acknowledged(PacketNumber largest_in_that_ack);

  std::optional<PacketNumber> largest_received() const { return largest_; }
  std::uint32_t ack_eliciting_since_ack() const { return ack_eliciting_since_ack_; }
  // Newest first, descending, non-overlapping, non-adjacent.
  const std::vector<AckRange>& ranges() const { return ranges_; }

 private:
  void record_replay(PacketNumber number);
  void add_to_ranges(PacketNumber number, Instant now);
  bool decimating() const;
  bool just_past_gap() const;
  Duration ack_timer() const;
  void on_eliciting(Instant now);
  void update_threshold(Instant now);

  AckTrackerConfig config_;

  // Anti-replay ring: bit (n % 64) of block (n / 64) % kReplayBlocks.
  std::array<std::uint64_t, kReplayBlocks> replay_bits_{};
  std::optional<PacketNumber> largest_;

  std::vector<AckRange> ranges_;       // <= kMaxAckRanges
  Instant newest_range_received_at_{};  // when ranges_.front().largest arrived

  std::uint32_t ack_eliciting_since_ack_ = 0;
  std::optional<Instant> first_unacked_eliciting_at_;
  std::optional<Instant> immediate_ack_since_;
  bool unacked_packets_ = false;

  // Decimation: the count since startup (or the last silence), the newest
  // ack-eliciting arrival, the previous ACK (the rate is measured between
  // ACKs), the smallest RTT seen and the current threshold.
  std::uint64_t eliciting_since_start_ = 0;
  std::optional<Instant> last_eliciting_at_;
  std::optional<Instant> last_ack_at_;
  Duration min_rtt_{0};
  std::uint32_t threshold_;
};

}  // namespace egw::tunnel
