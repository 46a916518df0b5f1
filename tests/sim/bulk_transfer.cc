#include "tests/sim/bulk_transfer.h"

#include <algorithm>

namespace egw::sim {

BulkTransfer::BulkTransfer(const BulkConfig& config, TunnelHost& client, TunnelHost& server)
    : config_(config), client_(client), server_(server) {}

bool BulkTransfer::start() {
  if (id_) return true;
  const Instant now = client_.now();
  id_ = client_.open_stream(config_.port, config_.content_class, &client_end_);
  if (!id_) return false;
  server_.expect_stream(*id_, &server_end_);
  started_at_ = now;
  reader_.emplace(*id_);
  auto& conn = client_.connection();
  if (sends_from_server()) {
    for (int i = 0; i < 8; ++i) request_[i] = static_cast<std::byte>(config_.bytes >> (56 - 8 * i));
    if (conn.stream_write(*id_, request_, now) != request_.size()) ++request_errors_;
    conn.stream_finish(*id_, now);
  } else {
    writer_.emplace(*id_, config_.bytes);
    writer_->pump(conn, now);
  }
  client_.flush();
  return true;
}

void BulkTransfer::start_at(EventLoop& loop, Instant when) {
  loop.schedule_at(when, [this] { start(); });
}

std::optional<Duration> BulkTransfer::completion_time() const {
  if (!started_at_ || !completed_at_) return std::nullopt;
  return *completed_at_ - *started_at_;
}

ByteCount BulkTransfer::bytes_delivered_by(Instant t) const {
  const auto it = std::upper_bound(deliveries_.begin(), deliveries_.end(), t,
                                   [](Instant v, const auto& d) { return v < d.first; });
  return it == deliveries_.begin() ? 0 : std::prev(it)->second;
}

void BulkTransfer::on_readable(TunnelHost& host, bool server) {
  if (!id_) return;
  const bool receiver_side = server != sends_from_server();
  if (receiver_side) {
    read_content(host);
  } else if (server) {
    read_request(host);
  } else {
    // client_to_server: the server's answer is an empty FIN.
    bool fin = false;
    const std::size_t n = host.connection().stream_read(*id_, scratch_, &fin, host.now());
    if (n != 0) ++request_errors_;
  }
  host.flush();
}

void BulkTransfer::on_writable(TunnelHost& host, bool server) {
  if (!writer_ || server != sends_from_server()) return;
  writer_->pump(host.connection(), host.now());
  host.flush();
}

void BulkTransfer::read_request(TunnelHost& host) {
  auto& conn = host.connection();
  bool fin = false;
  while (!request_done_) {
    std::size_t n = 0;
    if (request_read_ < request_.size()) {
      n = conn.stream_read(*id_, std::span(request_).subspan(request_read_), &fin, host.now());
      request_read_ += n;
    } else {
      n = conn.stream_read(*id_, scratch_, &fin, host.now());
      if (n != 0) ++request_errors_;  // longer than 8 bytes
    }
    if (fin) {
      request_done_ = true;
      if (request_read_ != request_.size()) ++request_errors_;
      ByteCount requested = 0;
      for (std::byte b : request_) requested = (requested << 8) | std::to_integer<ByteCount>(b);
      if (requested != config_.bytes) ++request_errors_;
      writer_.emplace(*id_, config_.bytes);
      writer_->pump(conn, host.now());
    }
    if (n == 0) break;
  }
}

void BulkTransfer::read_content(TunnelHost& host) {
  const std::size_t n = reader_->pump(host.connection(), scratch_, host.now());
  if (n > 0) record_delivery(host.now());
  if (reader_->fin() && !completed_at_) {
    completed_at_ = host.now();
    if (reader_->bytes() != config_.bytes) ++request_errors_;
    if (!sends_from_server() && !server_fin_sent_) {  // answer with an empty FIN
      host.connection().stream_finish(*id_, host.now());
      server_fin_sent_ = true;
    }
  }
}

void BulkTransfer::record_delivery(Instant now) {
  if (!deliveries_.empty() && deliveries_.back().first == now) {
    deliveries_.back().second = reader_->bytes();
  } else {
    deliveries_.emplace_back(now, reader_->bytes());
  }
}

}  // namespace egw::sim
