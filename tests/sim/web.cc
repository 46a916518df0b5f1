#include "tests/sim/web.h"

#include <utility>

namespace egw::sim {

namespace {
constexpr std::uint64_t kMalformedRequestError = 2;

template <class T>
T read_be(const std::byte* p, int n) {
  T v = 0;
  for (int i = 0; i < n; ++i) v = static_cast<T>((v << 8) | std::to_integer<T>(p[i]));
  return v;
}
}  // namespace

std::array<std::byte, kWebRequestBytes> encode_web_request(std::uint32_t index, const WebObject& object) {
  std::array<std::byte, kWebRequestBytes> out{};
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(index >> (24 - 8 * i));
  for (int i = 0; i < 8; ++i) out[4 + i] = static_cast<std::byte>(object.size_bytes >> (56 - 8 * i));
  out[12] = static_cast<std::byte>(object.content_class);
  return out;
}

// ---- server ----------------------------------------------------------------

WebServer::WebServer(TunnelHost& host, std::uint16_t port) { host.listen(port, this); }

void WebServer::on_opened(TunnelHost& host, const tunnel::StreamOpened& e) {
  streams_[e.id];
  on_readable(host, e.id);
}

void WebServer::on_readable(TunnelHost& host, StreamId id) {
  const auto it = streams_.find(id);
  if (it == streams_.end() || it->second.writer) return;
  read_request(host, id, it->second);
  host.flush();
}

void WebServer::read_request(TunnelHost& host, StreamId id, Exchange& ex) {
  auto& conn = host.connection();
  const Instant now = host.now();
  std::array<std::byte, 16> extra{};
  bool fin = false;
  bool overlong = false;
  while (!fin) {
    std::size_t n = 0;
    if (ex.request_read < ex.request.size()) {
      n = conn.stream_read(id, std::span(ex.request).subspan(ex.request_read), &fin, now);
      ex.request_read += n;
    } else {
      n = conn.stream_read(id, extra, &fin, now);
      overlong = n != 0;
    }
    if (n == 0 || overlong) break;
  }
  std::optional<ContentClass> cls;
  if (fin && ex.request_read == ex.request.size()) {
    cls = content_class_from_wire(std::to_integer<std::uint8_t>(ex.request[12]));
  }
  if (overlong || (fin && !cls)) {  // too long, too short, or an unknown class
    ++errors_;
    conn.stream_reset(id, kMalformedRequestError, now);
    streams_.erase(id);
    return;
  }
  if (!fin) return;  // wait for the rest
  const auto size = read_be<std::uint64_t>(ex.request.data() + 4, 8);
  conn.set_stream_class(id, *cls, now);
  ++served_;
  ex.writer.emplace(id, size);
  ex.writer->pump(conn, now);
}

void WebServer::on_writable(TunnelHost& host, StreamId id) {
  const auto it = streams_.find(id);
  if (it == streams_.end() || !it->second.writer) return;
  it->second.writer->pump(host.connection(), host.now());
  host.flush();
}

// ---- client ----------------------------------------------------------------

WebClient::WebClient(TunnelHost& host, Page page, const WebClientConfig& config)
    : host_(host), page_(std::move(page)), config_(config), objects_(page_.size()) {
  for (std::uint32_t i = 0; i < page_.size(); ++i) {
    if (!page_[i].is_html) continue;
    ++html_total_;
    if (!first_html_) first_html_ = i;
  }
}

void WebClient::start() {
  if (started_at_) return;
  started_at_ = host_.now();
  if (first_html_) {
    queue_.push_back(*first_html_);
  } else {
    for (std::uint32_t i = 0; i < page_.size(); ++i) queue_.push_back(i);
  }
  if (page_.empty()) page_completed_at_ = host_.now();
  request_more();
}

void WebClient::start_at(EventLoop& loop, Instant when) {
  loop.schedule_at(when, [this] { start(); });
}

std::optional<Duration> WebClient::html_time() const {
  if (!started_at_ || !html_completed_at_) return std::nullopt;
  return *html_completed_at_ - *started_at_;
}

std::optional<Duration> WebClient::page_time() const {
  if (!started_at_ || !page_completed_at_) return std::nullopt;
  return *page_completed_at_ - *started_at_;
}

void WebClient::request_more() {
  auto& conn = host_.connection();
  const Instant now = host_.now();
  bool sent = false;
  while (next_in_queue_ < queue_.size() &&
         (config_.max_concurrent == 0 || fetching_.size() < config_.max_concurrent)) {
    const std::uint32_t index = queue_[next_in_queue_];
    const WebObject& object = page_[index];
    const auto id = host_.open_stream(config_.port, object.content_class, this);
    if (!id) return;  // connection closed; nothing more to do
    ++next_in_queue_;
    const auto request = encode_web_request(index, object);
    if (conn.stream_write(*id, request, now) != request.size()) ++errors_;
    conn.stream_finish(*id, now);
    objects_[index].requested_at = now;
    objects_[index].stream = *id;
    fetching_.emplace(*id, std::make_pair(index, ContentReader(*id)));
    if (fetching_.size() > max_outstanding_) max_outstanding_ = fetching_.size();
    sent = true;
  }
  if (sent) host_.flush();
}

void WebClient::on_readable(TunnelHost& host, StreamId id) {
  const auto it = fetching_.find(id);
  if (it == fetching_.end()) return;
  auto& [index, reader] = it->second;
  reader.pump(host.connection(), scratch_, host.now());
  objects_[index].bytes = reader.bytes();
  if (config_.links == LinkDiscovery::while_parsing && first_html_ && index == *first_html_ &&
      !reader.fin()) {
    discover_links(reader.bytes(), false);
    request_more();
  }
  if (reader.fin()) {
    errors_ += reader.mismatches();
    if (reader.bytes() != page_[index].size_bytes) ++errors_;
    const std::uint32_t done_index = index;
    fetching_.erase(it);
    on_object_done(done_index);
  }
  host.flush();
}

void WebClient::discover_links(ByteCount html_bytes, bool html_done) {
  const std::uint64_t others = page_.size() - 1;  // called only when first_html_ is set
  const ByteCount html_size = page_[*first_html_].size_bytes;
  while (links_found_ < others) {
    const std::uint64_t k = links_found_ + 1;
    // Link k of n at byte k * size / (n + 1): evenly spread, none at the very end.
    if (!html_done && html_bytes < k * html_size / (others + 1)) break;
    const std::uint32_t index = links_found_ < *first_html_ ? links_found_ : links_found_ + 1;
    queue_.push_back(index);
    ++links_found_;
  }
}

void WebClient::on_reset(TunnelHost&, StreamId id, std::uint64_t) {
  const auto it = fetching_.find(id);
  if (it == fetching_.end()) return;
  ++errors_;
  fetching_.erase(it);
  // The object never completes: the page stays incomplete, and the test sees it.
  request_more();
}

void WebClient::on_object_done(std::uint32_t index) {
  const Instant now = host_.now();
  objects_[index].completed_at = now;
  ++done_;
  if (page_[index].is_html && ++html_done_ == html_total_) html_completed_at_ = now;
  // E-TCP: the embedded objects are requested once the HTML has arrived
  // (or, while_parsing, the rest of them).
  if (first_html_ && index == *first_html_) discover_links(objects_[index].bytes, true);
  if (done_ == page_.size()) page_completed_at_ = now;
  request_more();
}

}  // namespace egw::sim
