// A web page fetch over tunnel streams, after E-TCP section 4 (seed 000):
// the client requests the page's first HTML object; once it has arrived it
// requests every other object (embedded objects, and any further HTML parts),
// keeping at most max_concurrent requests outstanding (0 = unlimited). One
// stream per object, opened with the object's class as hint.
// With LinkDiscovery::while_parsing the client instead requests objects "as
// it encounters links while parsing the HTML" (E-TCP 4.3): the links to the
// n other objects are spread evenly through the first HTML object, link k
// (1..n, page order) at byte k * size / (n + 1), and object k is queued once
// that byte has arrived; so a server sends embedded objects while the HTML
// is still in flight, which is what the scheduling policies act on.
//
// Wire format of a request (client -> server, then FIN), 13 bytes:
//   u32 object index | u64 response size in bytes | u8 ContentClass   (big-endian)
// The server reads exactly that, calls set_stream_class(id, class), and
// answers with `size` content bytes (stream_content.h) and FIN. A malformed
// request is answered with a stream reset.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "tests/sim/stream_content.h"
#include "tests/sim/tunnel_host.h"

namespace egw::sim {

struct WebObject {
  ByteCount size_bytes = 0;
  ContentClass content_class = ContentClass::image;
  bool is_html = false;
};
using Page = std::vector<WebObject>;

inline constexpr std::size_t kWebRequestBytes = 13;
std::array<std::byte, kWebRequestBytes> encode_web_request(std::uint32_t index, const WebObject& object);

class WebServer : public StreamHandler {
 public:
  WebServer(TunnelHost& host, std::uint16_t port = 80);

  std::uint64_t requests_served() const { return served_; }
  std::uint64_t request_errors() const { return errors_; }
  std::size_t active_streams() const { return streams_.size(); }

  void on_opened(TunnelHost& host, const tunnel::StreamOpened& e) override;
  void on_readable(TunnelHost& host, StreamId id) override;
  void on_writable(TunnelHost& host, StreamId id) override;
  void on_reset(TunnelHost&, StreamId id, std::uint64_t) override { streams_.erase(id); }
  void on_closed(TunnelHost&, StreamId id) override { streams_.erase(id); }

 private:
  struct Exchange {
    std::array<std::byte, kWebRequestBytes> request{};
    std::size_t request_read = 0;
    std::optional<ContentWriter> writer;  // once the request is complete
  };
  void read_request(TunnelHost& host, StreamId id, Exchange& ex);

  std::map<StreamId, Exchange> streams_;  // bounded by the connection's incoming stream cap
  std::uint64_t served_ = 0;
  std::uint64_t errors_ = 0;
};

enum class LinkDiscovery {
  html_complete,  // every other object is queued when the first HTML has arrived
  while_parsing,  // queued as the first HTML's bytes arrive (see above)
};

struct WebClientConfig {
  std::size_t max_concurrent = 0;  // outstanding object requests; 0 = unlimited
  std::uint16_t port = 80;
  LinkDiscovery links = LinkDiscovery::html_complete;
};

struct ObjectTiming {
  std::optional<Instant> requested_at;
  std::optional<Instant> completed_at;  // last byte and FIN read
  ByteCount bytes = 0;
  std::optional<StreamId> stream;
};

class WebClient : public StreamHandler {
 public:
  WebClient(TunnelHost& host, Page page, const WebClientConfig& config = {});

  void start();
  void start_at(EventLoop& loop, Instant when);

  const Page& page() const { return page_; }
  const std::vector<ObjectTiming>& objects() const { return objects_; }
  std::optional<Instant> started_at() const { return started_at_; }
  // The last HTML object done (nullopt for a page without HTML, or not yet).
  std::optional<Instant> html_completed_at() const { return html_completed_at_; }
  std::optional<Instant> page_completed_at() const { return page_completed_at_; }
  std::optional<Duration> html_time() const;
  std::optional<Duration> page_time() const;
  bool complete() const { return page_completed_at_.has_value(); }
  // Wrong content bytes or sizes, and streams reset or refused.
  std::uint64_t errors() const { return errors_; }
  std::size_t max_outstanding_seen() const { return max_outstanding_; }

  void on_readable(TunnelHost& host, StreamId id) override;
  void on_reset(TunnelHost& host, StreamId id, std::uint64_t) override;

 private:
  void request_more();
  void on_object_done(std::uint32_t index);
  // Queues the other objects whose links lie within the first `html_bytes`
  // bytes of the first HTML object (all of them when html_done).
  void discover_links(ByteCount html_bytes, bool html_done);

  TunnelHost& host_;
  Page page_;
  WebClientConfig config_;
  std::vector<ObjectTiming> objects_;
  std::vector<std::uint32_t> queue_;  // indices waiting to be requested, in page order
  std::size_t next_in_queue_ = 0;
  std::map<StreamId, std::pair<std::uint32_t, ContentReader>> fetching_;
  std::size_t done_ = 0;
  std::size_t html_total_ = 0;
  std::size_t html_done_ = 0;
  std::optional<std::uint32_t> first_html_;
  std::uint32_t links_found_ = 0;  // other objects queued so far, in page order
  std::size_t max_outstanding_ = 0;
  std::uint64_t errors_ = 0;
  std::optional<Instant> started_at_;
  std::optional<Instant> html_completed_at_;
  std::optional<Instant> page_completed_at_;
  std::vector<std::byte> scratch_ = std::vector<std::byte>(64 * 1024);
};

}  // namespace egw::sim
