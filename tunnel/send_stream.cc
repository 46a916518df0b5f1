#include "tunnel/send_stream.h"

#include <algorithm>
#include <cassert>

namespace egw::tunnel {

SendStream::SendStream(ByteCount buffer_capacity_bytes, std::uint64_t initial_peer_credit,
                       BufferPool* pool, ByteCount max_capacity_bytes)
    : capacity_bytes_(static_cast<std::uint32_t>(std::min<ByteCount>(buffer_capacity_bytes, 0xffff'ffffu))),
      max_capacity_bytes_(static_cast<std::uint32_t>(
          std::min<ByteCount>(std::max(buffer_capacity_bytes, max_capacity_bytes), 0xffff'ffffu))),
      buffer_(pool),
      peer_max_data_(initial_peer_credit) {}

ByteCount SendStream::capacity_bytes() const {
  const std::uint64_t credit = peer_max_data_ > acked_prefix_ ? peer_max_data_ - acked_prefix_ : 0;
  return std::clamp<ByteCount>(credit, ByteCount{capacity_bytes_}, ByteCount{max_capacity_bytes_});
}

ByteCount SendStream::buffer_room_bytes() const {
  const ByteCount capacity = capacity_bytes();
  return capacity > buffer_.size() ? capacity - buffer_.size() : 0;
}

std::size_t SendStream::write(std::span<const std::byte> data) {
  if (fin_requested_) return 0;
  const std::size_t accepted =
      static_cast<std::size_t>(std::min<ByteCount>(data.size(), buffer_room_bytes()));
  if (accepted < data.size()) write_blocked_ = true;
  buffer_.append(data.first(accepted));
  write_end_ += accepted;
  return accepted;
}

ByteRing::Pieces SendStream::write_room(std::size_t bytes) {
  if (fin_requested_) return {};
  return buffer_.back_room(static_cast<std::size_t>(std::min<ByteCount>(bytes, buffer_room_bytes())));
}

void SendStream::commit_write(std::size_t bytes) {
  buffer_.commit_back(bytes);
  write_end_ += bytes;
}

void SendStream::finish() { fin_requested_ = true; }

bool SendStream::take_writable_signal() {
  if (!write_blocked_ || fin_requested_ || buffer_room_bytes() == 0) return false;
  write_blocked_ = false;
  return true;
}

void SendStream::on_max_stream_data(std::uint64_t maximum) {
  peer_max_data_ = std::max(peer_max_data_, maximum);
}

bool SendStream::has_retransmission() const { return !lost_.empty() || fin_lost_; }

std::uint64_t SendStream::new_data_end(std::uint64_t new_bytes_allowed) const {
  std::uint64_t end = std::min(write_end_, peer_max_data_);
  end = std::max(end, next_offset_);
  return std::min(end, next_offset_ + new_bytes_allowed);
}

bool SendStream::has_new_data(std::uint64_t new_bytes_allowed) const {
  if (new_data_end(new_bytes_allowed) > next_offset_) return true;
  // A FIN alone needs no credit: it adds no byte.
  return fin_requested_ && !fin_sent_ && next_offset_ == write_end_;
}

std::optional<std::uint64_t> SendStream::next_send_offset(std::uint64_t new_bytes_allowed) const {
  if (auto lost = lost_.first()) return lost->start;
  if (fin_lost_) return write_end_;
  if (has_new_data(new_bytes_allowed)) return next_offset_;
  return std::nullopt;
}

std::optional<SendStream::Chunk> SendStream::take_chunk(std::size_t max_length,
                                                        std::uint64_t new_bytes_allowed) {
  if (auto lost = lost_.first()) {
    if (max_length == 0) return std::nullopt;
    Chunk chunk{lost->start, static_cast<std::size_t>(std::min<std::uint64_t>(
                                 lost->length(), max_length)),
                false, true};
    lost_.erase(chunk.offset, chunk.offset + chunk.length);
    // The lost FIN rides along when the chunk reaches the end of the data.
    if (fin_lost_ && chunk.offset + chunk.length == write_end_) {
      chunk.fin = true;
      fin_lost_ = false;
    }
    return chunk;
  }
  if (fin_lost_) {
    fin_lost_ = false;
    return Chunk{write_end_, 0, true, true};
  }
  const std::uint64_t end = new_data_end(new_bytes_allowed);
  Chunk chunk{next_offset_,
              static_cast<std::size_t>(std::min<std::uint64_t>(end - next_offset_, max_length)),
              false, false};
  next_offset_ += chunk.length;
  if (fin_requested_ && !fin_sent_ && next_offset_ == write_end_) {
    chunk.fin = true;
    fin_sent_ = true;
  }
  if (chunk.length == 0 && !chunk.fin) return std::nullopt;
  return chunk;
}

void SendStream::copy_out(const Chunk& chunk, std::span<std::byte> out) const {
  assert(chunk.offset >= acked_prefix_ && out.size() >= chunk.length);
  buffer_.read_at(static_cast<std::size_t>(chunk.offset - acked_prefix_),
                  out.first(chunk.length));
}

ByteRing::ConstPieces SendStream::pieces(const Chunk& chunk) const {
  assert(chunk.offset >= acked_prefix_);
  return buffer_.at(static_cast<std::size_t>(chunk.offset - acked_prefix_), chunk.length);
}

void SendStream::on_acked(std::uint64_t offset, std::size_t length, bool fin) {
  if (fin) {
    fin_acked_ = true;
    fin_lost_ = false;
  }
  const std::uint64_t end = offset + length;
  if (end <= acked_prefix_) return;
  const std::uint64_t start = std::max(offset, acked_prefix_);
  lost_.erase(start, end);  // a spurious loss: no need to resend
  if (start == acked_prefix_ && acked_.empty()) {  // in order: the common case
    buffer_.pop_front(static_cast<std::size_t>(end - acked_prefix_));
    acked_prefix_ = end;
    return;
  }
  acked_.insert(start, end);
  // Free the acknowledged prefix.
  auto head = acked_.first();
  if (head && head->start == acked_prefix_) {
    buffer_.pop_front(static_cast<std::size_t>(head->end - acked_prefix_));
    acked_prefix_ = head->end;
    acked_.erase_below(acked_prefix_);
  }
}

void SendStream::on_lost(std::uint64_t offset, std::size_t length, bool fin) {
  if (fin && !fin_acked_) fin_lost_ = true;
  const std::uint64_t end = offset + length;
  if (end <= acked_prefix_) return;
  acked_.for_each_gap(std::max(offset, acked_prefix_), end,
                      [&](const Interval& gap) { lost_.insert(gap.start, gap.end); });
}

bool SendStream::all_acked() const {
  return fin_requested_ && fin_acked_ && acked_prefix_ == write_end_;
}

}  // namespace egw::tunnel
