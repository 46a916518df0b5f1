#include "tunnel/recv_stream.h"

#include <algorithm>

namespace egw::tunnel {

RecvStream::RecvStream(ByteCount window_bytes, std::uint64_t initial_credit, BufferPool* pool,
                       ByteCount max_window_bytes)
    : tuner_(window_bytes, max_window_bytes),
      buffer_(pool),
      max_stream_data_(std::max(window_bytes, initial_credit)) {}

RecvStream::FrameResult RecvStream::on_stream_frame(std::uint64_t offset,
                                                    std::span<const std::byte> data, bool fin) {
  const std::uint64_t end = offset + data.size();  // the codec keeps this < 2^62
  if (end > max_stream_data_) return {Status::flow_control_error, 0};
  if (final_size_ && (end > *final_size_ || (fin && end != *final_size_))) {
    return {Status::final_size_error, 0};
  }
  if (fin) {
    if (highest_received_ > end) return {Status::final_size_error, 0};
    final_size_ = end;
  }
  const std::uint64_t new_bytes = end > highest_received_ ? end - highest_received_ : 0;
  highest_received_ = std::max(highest_received_, end);

  // Keep only bytes at or above the read offset that we do not have yet.
  const std::uint64_t start = std::max(offset, read_offset_);
  if (start < end) {
    buffer_.grow_to(static_cast<std::size_t>(highest_received_ - read_offset_));
    received_.for_each_gap(start, end, [&](const Interval& gap) {
      buffer_.write_at(static_cast<std::size_t>(gap.start - read_offset_),
                       data.subspan(static_cast<std::size_t>(gap.start - offset),
                                    static_cast<std::size_t>(gap.length())));
    });
    received_.insert(start, end);
    if (received_.interval_count() > kMaxIntervals) return {Status::too_fragmented, new_bytes};
  }
  return {Status::ok, new_bytes};
}

std::size_t RecvStream::read(std::span<std::byte> out, bool* fin) {
  const ByteRing::ConstPieces ready = peek();
  const std::size_t copied = std::min(ready[0].size() + ready[1].size(), out.size());
  if (copied > 0) buffer_.read_at(0, out.first(copied));
  consume(copied, fin);
  return copied;
}

ByteRing::ConstPieces RecvStream::peek() const {
  auto head = received_.first();
  if (!head || head->start != read_offset_) return {};
  return buffer_.front(static_cast<std::size_t>(head->length()));
}

void RecvStream::consume(std::size_t bytes, bool* fin) {
  if (bytes > 0) {
    buffer_.pop_front(bytes);
    read_offset_ += bytes;
    received_.erase_below(read_offset_);
  }
  if (final_size_ && read_offset_ == *final_size_) fin_read_ = true;
  if (fin) *fin = fin_read_;
}

bool RecvStream::readable() const {
  auto head = received_.first();
  if (head && head->start == read_offset_) return true;
  return final_size_ && read_offset_ == *final_size_ && !fin_read_;
}

bool RecvStream::credit_update_due() const {
  // Once the final size is known the peer needs no more credit.
  if (final_size_) return false;
  const ByteCount window = tuner_.window();
  const std::uint64_t target = read_offset_ + window;
  // Update when half the window was consumed since the last advertisement:
  // target - max >= window / 2.
  return target >= max_stream_data_ + window / 2 && target > max_stream_data_;
}

std::optional<std::uint64_t> RecvStream::take_credit_update(Instant now, Duration rtt) {
  if (!credit_update_due()) return std::nullopt;
  tuner_.on_update(now, rtt);
  max_stream_data_ = read_offset_ + tuner_.window();
  return max_stream_data_;
}

}  // namespace egw::tunnel
