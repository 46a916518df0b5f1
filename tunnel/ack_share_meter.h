// AckShareMeter: whether this side's ACKs are a costly part of its own
// uplink, so that ACK decimation (AckTracker, "Decimation") pays; sans-IO.
//
// Why: on an asymmetric line (4 Mbit/s down, 1 up) an ACK per two packets
// of the download is ~11 % of the uplink, taken from this side's own upload
// (the WAN lab's full-links-asym: upload 79 % of its link, 84 % decimated).
// Decimating everywhere costs the papers' ACK-clocked joins and pacing their
// bounds, and `max_rate.up` (which turns it on) is set by few admins. So
// `ensemble.ack_decimation: auto` without max_rate measures instead: over
// each interval of kIntervalPackets ack-eliciting packets received, the
// bytes that ACKs of every ack_every_packets-th packet would take (the mean
// ACK-only packet sent, times the packets / ack_every_packets) against all
// this side sends, and whether this side's uplink is busy as far as its law
// can tell: it sent at least kBusyBytes besides ACKs (an eighth of the
// interval's packets, full-size), and its data waited for the window, the
// pacer or a join at least once per two packets it sent. A page's requests
// are no busy uplink: the simulator's page loads decimated on them (each
// request held by the ACK-clocked join) and lost time. It decimates
// while both hold: the share at least kOnShare (5 %), and stops when the
// share falls under kOffShare or the uplink is not busy. The estimate is of
// undecimated ACKs in either state, so decimating does not switch it off.
// On a symmetric link the share is ~3 % (20 Mbit/s both ways) and a side
// that only receives never waits: neither decimates.
#pragma once

#include <cstdint>
#include <optional>

#include "common/units.h"

namespace egw::tunnel {

class AckShareMeter {
 public:
  static constexpr std::uint32_t kIntervalPackets = 256;
  static constexpr double kOnShare = 0.05;
  static constexpr double kOffShare = 0.04;
  static constexpr ByteCount kBusyBytes = kIntervalPackets / 8 * 1200;

  // A datagram this side sent; `ack_only`: it elicits no ACK (an ACK, alone).
  void on_sent(ByteCount bytes, bool ack_only) {
    sent_bytes_ += bytes;
    if (ack_only) {
      ack_only_bytes_ += bytes;
      ++ack_only_packets_;
    } else {
      ++other_packets_;
    }
  }
  // This side had stream data to send and its window, pacer or a join held it.
  void on_data_held() { ++held_; }
  // An ack-eliciting packet arrived. At the end of an interval: whether to
  // decimate from now on (`decimating`: whether it does now).
  std::optional<bool> on_eliciting_received(std::uint32_t ack_every_packets, bool decimating) {
    if (++received_ < kIntervalPackets) return std::nullopt;
    const bool on = decide(ack_every_packets, decimating);
    *this = AckShareMeter{};
    return on;
  }

 private:
  bool decide(std::uint32_t ack_every_packets, bool decimating) const {
    const ByteCount others = sent_bytes_ - ack_only_bytes_;
    const bool busy = others >= kBusyBytes && 2 * held_ >= other_packets_;
    if (!busy || ack_only_packets_ == 0 || ack_every_packets == 0) return false;
    const double ack_bytes = static_cast<double>(ack_only_bytes_) / static_cast<double>(ack_only_packets_) *
                             static_cast<double>(received_) / static_cast<double>(ack_every_packets);
    const double share = ack_bytes / (static_cast<double>(others) + ack_bytes);
    return share >= (decimating ? kOffShare : kOnShare);
  }

  std::uint32_t received_ = 0;
  ByteCount sent_bytes_ = 0;
  ByteCount ack_only_bytes_ = 0;
  std::uint64_t ack_only_packets_ = 0;
  std::uint64_t other_packets_ = 0;
  std::uint64_t held_ = 0;  // polls that found stream data held
};

}  // namespace egw::tunnel
