#include "tests/sim/request_flow.h"

#include <algorithm>

#include "tests/sim/stream_content.h"

namespace egw::sim {

RequestFlow::RequestFlow(const RequestFlowConfig& config, TunnelHost& client, TunnelHost& server)
    : config_(config), client_(client), server_(server) {}

void RequestFlow::run(EventLoop& loop, Instant start, Instant stop) {
  loop_ = &loop;
  start_ = start;
  stop_ = stop;
  loop.schedule_at(start, [this] {
    id_ = client_.open_stream(config_.port, config_.content_class, &client_end_);
    if (!id_) {
      ++mismatches_;
      return;
    }
    server_.expect_stream(*id_, &server_end_);
    send_request();
  });
}

std::vector<Duration> RequestFlow::latencies_between(Instant from, Instant to) const {
  std::vector<Duration> out;
  for (const auto& [at, latency] : done_) {
    if (at >= from && at < to) out.push_back(latency);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void RequestFlow::write(TunnelHost& host, std::uint64_t& offset, ByteCount bytes) {
  std::vector<std::byte> data(bytes);
  fill_content(*id_, offset, data);
  if (host.connection().stream_write(*id_, data, host.now()) != data.size()) ++mismatches_;
  offset += bytes;
  host.flush();
}

void RequestFlow::send_request() {
  if (client_.now() >= stop_) return;
  outstanding_ = client_.now();
  ++sent_requests_;
  write(client_, client_written_, config_.request_bytes);
}

// The lab's loop: the next request at start + k * interval, or at once when
// the answer came later than that.
void RequestFlow::schedule_next() {
  const Instant due = start_ + static_cast<std::int64_t>(sent_requests_) * config_.interval;
  if (due <= client_.now()) {
    send_request();
  } else {
    loop_->schedule_at(due, [this] { send_request(); });
  }
}

void RequestFlow::on_readable(TunnelHost& host, bool server) {
  if (!id_) return;
  auto& conn = host.connection();
  bool fin = false;
  while (const std::size_t n = conn.stream_read(*id_, scratch_, &fin, host.now())) {
    std::uint64_t& read = server ? server_read_ : client_read_;
    mismatches_ += count_mismatches(*id_, read, std::span(scratch_).first(n));
    read += n;
  }
  if (server) {
    // One answer per complete request.
    while (server_read_ >= (server_written_ / config_.response_bytes + 1) * config_.request_bytes) {
      write(server_, server_written_, config_.response_bytes);
    }
    return;
  }
  if (outstanding_ && client_read_ >= sent_requests_ * config_.response_bytes) {
    done_.emplace_back(*outstanding_, host.now() - *outstanding_);
    outstanding_.reset();
    schedule_next();
  }
}

}  // namespace egw::sim
