#include "tunnel/ack_tracker.h"

#include <algorithm>
#include <utility>

#include "tunnel/frame_codec.h"
#include "tunnel/varint.h"

namespace egw::tunnel {
namespace {
constexpr std::uint64_t kBlockBits = 64;
std::size_t block_of(PacketNumber n) {
  return static_cast<std::size_t>((n / kBlockBits) % AckTracker::kReplayBlocks);
}
std::uint64_t bit_of(PacketNumber n) { return std::uint64_t{1} << (n % kBlockBits); }
}  // namespace

bool AckTracker::is_new(PacketNumber number) const {
  if (number > kVarintMax) return false;
  if (!largest_ || number > *largest_) return true;
  if (*largest_ - number >= kReplayWindowPackets) return false;  // too old to tell
  return (replay_bits_[block_of(number)] & bit_of(number)) == 0;
}

void AckTracker::record_replay(PacketNumber number) {
  if (!largest_ || number > *largest_) {
    // Clear the blocks the window slides over (at most the whole ring),
    // RFC 6479 section 2.
    const std::uint64_t current_block = largest_ ? *largest_ / kBlockBits : 0;
    const std::uint64_t new_block = number / kBlockBits;
    if (!largest_) {
      replay_bits_.fill(0);
    } else {
      const std::uint64_t steps =
          std::min<std::uint64_t>(new_block - current_block, kReplayBlocks);
      for (std::uint64_t i = 1; i <= steps; ++i) {
        replay_bits_[static_cast<std::size_t>((current_block + i) % kReplayBlocks)] = 0;
      }
    }
    largest_ = number;
  }
  replay_bits_[block_of(number)] |= bit_of(number);
}

void AckTracker::add_to_ranges(PacketNumber number, Instant now) {
  // Walk newest to oldest: extend, merge or insert. n <= 2^62 - 1, so +1 is safe.
  std::size_t i = 0;
  for (; i < ranges_.size(); ++i) {
    AckRange& r = ranges_[i];
    if (number > r.largest + 1) break;  // a new range above this one
    if (number == r.largest + 1) {
      // (A merge with ranges_[i - 1] cannot be needed: the previous
      // iteration would have extended that range downwards instead.)
      r.largest = number;
      if (i == 0) newest_range_received_at_ = now;
      return;
    }
    if (number >= r.smallest) return;  // already covered
    if (number + 1 == r.smallest) {
      r.smallest = number;
      if (i + 1 < ranges_.size() && ranges_[i + 1].largest + 1 == number) {
        r.smallest = ranges_[i + 1].smallest;
        ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      }
      return;
    }
  }
  ranges_.insert(ranges_.begin() + static_cast<std::ptrdiff_t>(i), AckRange{number, number});
  if (i == 0) newest_range_received_at_ = now;
  if (ranges_.size() > kMaxAckRanges) ranges_.pop_back();  // forget the oldest
}

bool AckTracker::on_packet_received(PacketNumber number, bool ack_eliciting, Instant now) {
  if (!is_new(number)) return false;
  // Out of order (RFC 9000 section 13.2.1): below the largest, or above it
  // with numbers missing in between. Judged before the largest moves.
  const bool out_of_order = largest_ && (number < *largest_ || number > *largest_ + 1);
  record_replay(number);
  add_to_ranges(number, now);
  unacked_packets_ = true;
  if (ack_eliciting) {
    on_eliciting(now);
    ++ack_eliciting_since_ack_;
    if (!first_unacked_eliciting_at_) first_unacked_eliciting_at_ = now;
    const bool quick = out_of_order || (decimating() && just_past_gap());
    if ((quick || ack_eliciting_since_ack_ >= ack_threshold()) && !immediate_ack_since_) {
      immediate_ack_since_ = now;
    }
  }
  return true;
}

// Startup again after a silence: the sender may restart slow start, and its
// first packets need their ACKs as before (Linux re-enters quickack after
// an idle RTO).
void AckTracker::on_eliciting(Instant now) {
  const Duration silence = std::max<Duration>(ms(200), 2 * min_rtt_);
  if (last_eliciting_at_ && now - *last_eliciting_at_ > silence) {
    eliciting_since_start_ = 0;
    threshold_ = config_.ack_every_packets;
  }
  ++eliciting_since_start_;
  last_eliciting_at_ = now;
}

bool AckTracker::decimating() const {
  return config_.decimation && eliciting_since_start_ > config_.decimation_after_packets;
}

// The newest run of numbers starts just above a hole and is still shorter
// than the packet threshold: each of its packets may be the one that lets
// the sender declare the hole lost.
bool AckTracker::just_past_gap() const {
  return ranges_.size() >= 2 && ranges_.front().largest - ranges_.front().smallest < kQuickAckPackets;
}

std::uint32_t AckTracker::ack_threshold() const {
  return decimating() ? threshold_ : config_.ack_every_packets;
}

Duration AckTracker::ack_timer() const {
  if (!decimating() || min_rtt_ <= Duration{0}) return config_.max_ack_delay;
  return std::min(config_.max_ack_delay, min_rtt_ / 4);
}

std::optional<Instant> AckTracker::ack_deadline() const {
  if (!first_unacked_eliciting_at_) return std::nullopt;
  if (immediate_ack_since_) return immediate_ack_since_;
  return *first_unacked_eliciting_at_ + ack_timer();
}

void AckTracker::on_rtt_sample(Duration rtt) {
  if (rtt <= Duration{0}) return;
  min_rtt_ = min_rtt_ == Duration{0} ? rtt : std::min(min_rtt_, rtt);
}

std::optional<AckFrame> AckTracker::ack_frame(Instant now, std::size_t budget_bytes,
                                              std::optional<Duration> timestamp) const {
  const Duration delay = std::max(Duration::zero(), now - newest_range_received_at_);
  return fit_ack_frame(ranges_, delay, budget_bytes, timestamp);
}

void AckTracker::on_ack_sent(Instant now) {
  if (decimating()) update_threshold(now);
  else last_ack_at_ = now;
  ack_eliciting_since_ack_ = 0;
  first_unacked_eliciting_at_.reset();
  immediate_ack_since_.reset();
  unacked_packets_ = false;
}

// The packets a quarter RTT holds at the rate packets came in since the
// previous ACK (idle gaps included, so a sender limited by its window, whose
// packets come in bursts, keeps about ack_every_packets per ACK), averaged
// with the last threshold.
void AckTracker::update_threshold(Instant now) {
  const std::optional<Instant> previous = std::exchange(last_ack_at_, now);
  if (!previous || ack_eliciting_since_ack_ == 0) return;
  const std::uint32_t floor = config_.ack_every_packets;
  const std::uint32_t ceiling = std::max(floor, config_.decimation_max_packets);
  const Duration interval = now - *previous;
  const std::int64_t target =
      interval <= Duration{0}
          ? ceiling
          : std::min<std::int64_t>(ceiling, ack_eliciting_since_ack_ * ack_timer().count() / interval.count());
  threshold_ = std::clamp<std::uint32_t>(static_cast<std::uint32_t>((threshold_ + target + 1) / 2), floor,
                                         ceiling);
}

void AckTracker::on_ack_acknowledged(PacketNumber largest_in_that_ack) {
  // Ranges are descending: drop wholly covered ones from the back, trim one.
  while (!ranges_.empty() && ranges_.back().largest <= largest_in_that_ack) ranges_.pop_back();
  if (!ranges_.empty() && ranges_.back().smallest <= largest_in_that_ack) {
    ranges_.back().smallest = largest_in_that_ack + 1;
  }
}

}  // namespace egw::tunnel
