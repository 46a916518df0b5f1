#include "tunnel/sent_history.h"

#include <cassert>

namespace egw::tunnel {

void SentHistory::reset(PacketNumber next_number) {
  entries_.clear();
  chunks_.clear();
  controls_.clear();
  front_number_ = next_number;
  front_chunk_ = 0;
  front_control_ = 0;
  lost_count_ = 0;
}

SentEntry& SentHistory::begin(PacketNumber number) {
  assert(number == next_number());
  (void)number;
  SentEntry e;
  e.first_chunk = front_chunk_ + chunks_.size();
  e.first_control = front_control_ + controls_.size();
  entries_.push_back(e);
  return entries_.back();
}

void SentHistory::add_chunk(const SentChunk& chunk) {
  chunks_.push_back(chunk);
  ++entries_.back().chunk_count;
}

void SentHistory::add_control(const SentControl& control) {
  controls_.push_back(control);
  ++entries_.back().control_count;
}

void SentHistory::discard_back() {
  const SentEntry& e = entries_.back();
  for (std::uint32_t i = 0; i < e.chunk_count; ++i) chunks_.pop_back();
  for (std::uint32_t i = 0; i < e.control_count; ++i) controls_.pop_back();
  entries_.pop_back();
}

SentEntry* SentHistory::find(PacketNumber number) {
  if (number < front_number_ || number - front_number_ >= entries_.size()) return nullptr;
  return &entries_[static_cast<std::size_t>(number - front_number_)];
}

void SentHistory::mark_lost(SentEntry& e, Instant now) {
  e.state = SentState::lost;
  e.lost_at = now;
  ++lost_count_;
}

void SentHistory::mark_settled(SentEntry& e) {
  if (e.state == SentState::lost) --lost_count_;
  e.state = SentState::settled;
}

void SentHistory::drop_front(Instant lost_before, std::size_t max_lost) {
  while (!entries_.empty()) {
    SentEntry& e = entries_.front();
    if (e.state == SentState::in_flight) return;
    if (e.state == SentState::lost) {
      if (e.lost_at >= lost_before && lost_count_ <= max_lost) return;
      --lost_count_;
    }
    pop_front();
  }
}

void SentHistory::pop_front() {
  const SentEntry& e = entries_.front();
  for (std::uint32_t i = 0; i < e.chunk_count; ++i) chunks_.pop_front();
  for (std::uint32_t i = 0; i < e.control_count; ++i) controls_.pop_front();
  front_chunk_ += e.chunk_count;
  front_control_ += e.control_count;
  entries_.pop_front();
  ++front_number_;
}

}  // namespace egw::tunnel
