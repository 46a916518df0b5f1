// The Content-Type of a plain-HTTP response, from the first bytes a server
// sends, so the hub can classify a stream by what it carries (html, script,
// image...). HTTPS streams are classified at the branch by SNI instead.
//
// Stateless and incremental like scan_client_hello: call again with all the
// bytes so far. Only the first kHttpHeadScanBytes are looked at; a head that
// has not ended by then is given up on (not_http). Interim 1xx heads (100
// Continue, 103 Early Hints) are skipped: the final response's head counts.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace egw::proxy {

inline constexpr std::size_t kHttpHeadScanBytes = 8 * 1024;

enum class HttpHeadStatus {
  need_more,  // an HTTP/1.x response so far, its head not ended yet
  not_http,   // not "HTTP/1.x NNN", or no end of head within the cap
  complete,
};

struct HttpResponseHead {
  HttpHeadStatus status = HttpHeadStatus::need_more;
  int status_code = 0;  // complete: of the final response
  // complete: the media type ("text/html"), lowercase, without parameters;
  // nullopt if there is no parseable Content-Type.
  std::optional<std::string> content_type = std::nullopt;
};

HttpResponseHead scan_http_response_head(std::span<const std::byte> first_bytes);

// Whether a client's first bytes start like an HTTP/1.x request line: an
// upper-case method and a space (for logs and metrics, nothing decides on it).
enum class HttpRequestSniff { need_more, no, yes };
HttpRequestSniff sniff_http_request(std::span<const std::byte> first_bytes);

}  // namespace egw::proxy
