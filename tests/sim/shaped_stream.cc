#include "tests/sim/shaped_stream.h"

#include <algorithm>
#include <memory>

namespace egw::sim {

ShapedStream::ShapedStream(EventLoop& loop, const ShapedStreamConfig& config, TunnelHost& client,
                           TunnelHost& server)
    : loop_(loop), config_(config), client_(client), server_(server) {}

ShapedStream::~ShapedStream() { *alive_ = false; }

bool ShapedStream::start() {
  if (id_) return true;
  id_ = client_.open_stream(config_.port, config_.content_class, &client_end_);
  if (!id_) return false;
  server_.expect_stream(*id_, &server_end_);
  started_at_ = client_.now();
  if (config_.total_bytes > 0) on_write_tick();
  if (config_.read_chunk_bytes > 0) {
    loop_.schedule_in(config_.read_period, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) on_read_tick();
    });
  }
  client_.flush();
  return true;
}

void ShapedStream::start_at(Instant when) {
  loop_.schedule_at(when, [this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) start();
  });
}

void ShapedStream::on_write_tick() {
  const ByteCount chunk = config_.write_chunk_bytes == 0 ? config_.total_bytes : config_.write_chunk_bytes;
  allowance_ = std::min(config_.total_bytes, allowance_ + chunk);
  pump_writer();
  if (allowance_ < config_.total_bytes) {
    loop_.schedule_in(config_.write_period, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) on_write_tick();
    });
  }
}

void ShapedStream::pump_writer() {
  if (!id_) return;
  auto& conn = client_.connection();
  const Instant now = client_.now();
  while (written_ < allowance_) {
    const auto n = static_cast<std::size_t>(std::min<ByteCount>(allowance_ - written_, buffer_.size()));
    const std::span<std::byte> chunk(buffer_.data(), n);
    fill_content(*id_, written_, chunk);
    const std::size_t accepted = conn.stream_write(*id_, chunk, now);
    written_ += accepted;
    if (accepted < n) break;  // wait for StreamWritable
  }
  if (written_ == config_.total_bytes && config_.finish && !fin_sent_ && config_.total_bytes > 0) {
    conn.stream_finish(*id_, now);
    fin_sent_ = true;
  }
  client_.flush();
}

void ShapedStream::on_read_tick() {
  read(config_.read_chunk_bytes);
  if (!fin_read_) {
    loop_.schedule_in(config_.read_period, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) on_read_tick();
    });
  }
}

void ShapedStream::on_readable() {
  if (config_.read_chunk_bytes == 0) read(0);
}

void ShapedStream::read(ByteCount budget) {
  if (!id_ || fin_read_) return;
  auto& conn = server_.connection();
  const Instant now = server_.now();
  ByteCount left = budget == 0 ? ~ByteCount{0} : budget;
  while (left > 0 && !fin_read_) {
    const auto n = static_cast<std::size_t>(std::min<ByteCount>(left, buffer_.size()));
    bool fin = false;
    const std::size_t got = conn.stream_read(*id_, std::span<std::byte>(buffer_.data(), n), &fin, now);
    mismatches_ += count_mismatches(*id_, read_, std::span<const std::byte>(buffer_.data(), got));
    read_ += got;
    left -= got;
    if (fin) {
      fin_read_ = true;
      completed_at_ = now;
    }
    if (got == 0) break;
  }
  server_.flush();
}

}  // namespace egw::sim
