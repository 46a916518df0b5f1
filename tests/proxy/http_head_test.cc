// Content-Type from a server's first bytes: complete heads, heads split at
// every byte, interim 1xx heads, the cap, and things that are not HTTP.
#include "proxy/http_head.h"

#include <gtest/gtest.h>

#include <vector>

namespace egw::proxy {
namespace {

std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }
HttpResponseHead scan(std::string_view s) { return scan_http_response_head(bytes(s)); }
std::optional<std::string> type_of(std::string_view s) {
  const HttpResponseHead h = scan(s);
  EXPECT_EQ(h.status, HttpHeadStatus::complete) << s;
  return h.content_type;
}

constexpr std::string_view kResponse =
    "HTTP/1.1 200 OK\r\n"
    "Date: Mon, 27 Jul 2009 12:28:53 GMT\r\n"
    "Content-Type: text/HTML; charset=UTF-8\r\n"
    "Content-Length: 88\r\n"
    "\r\n"
    "<html>";

TEST(HttpHead, ContentTypeOfAResponse) {
  const HttpResponseHead h = scan(kResponse);
  EXPECT_EQ(h.status, HttpHeadStatus::complete);
  EXPECT_EQ(h.status_code, 200);
  EXPECT_EQ(h.content_type, "text/html");
}

TEST(HttpHead, SplitAtEveryByte) {
  const std::size_t head_end = kResponse.find("\r\n\r\n") + 4;
  for (std::size_t n = 0; n <= kResponse.size(); ++n) {
    const HttpResponseHead h = scan(kResponse.substr(0, n));
    if (n < head_end) {
      EXPECT_EQ(h.status, HttpHeadStatus::need_more) << n;
    } else {
      EXPECT_EQ(h.status, HttpHeadStatus::complete) << n;
      EXPECT_EQ(h.content_type, "text/html") << n;
    }
  }
}

TEST(HttpHead, FieldSyntaxVariants) {
  EXPECT_EQ(type_of("HTTP/1.0 200 OK\r\ncontent-type:image/PNG\r\n\r\n"), "image/png");
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\nCONTENT-TYPE:  \t application/javascript \t\n\n"), "application/javascript");
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type : text/css\r\n\r\n"), "text/css");  // space before the colon
  EXPECT_EQ(type_of("HTTP/1.1 200\r\nContent-Type: text/css\r\n\r\n"), "text/css");      // no reason phrase
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type:\r\n  text/html;\r\n\tcharset=utf-8\r\n\r\n"), "text/html");  // folded
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nX-Content-Type: text/html\r\n\r\n"), std::nullopt);
  EXPECT_EQ(type_of("HTTP/1.1 204 No Content\r\n\r\n"), std::nullopt);
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type: garbage\r\n\r\n"), std::nullopt);
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type: \r\n\r\n"), std::nullopt);
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nno colon here\r\nContent-Type: text/html\r\n\r\n"), "text/html");
}

TEST(HttpHead, LastParseableContentTypeWins) {
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\n\r\n"), "text/html");
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type: text/plain, image/gif;q=1\r\n\r\n"), "image/gif");
  EXPECT_EQ(type_of("HTTP/1.1 200 OK\r\nContent-Type: text/plain, */\r\n\r\n"), "text/plain");
}

TEST(HttpHead, InterimResponsesAreSkipped) {
  const std::string_view early =
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
  const HttpResponseHead h = scan(early);
  EXPECT_EQ(h.status, HttpHeadStatus::complete);
  EXPECT_EQ(h.status_code, 200);
  EXPECT_EQ(h.content_type, "application/json");
  EXPECT_EQ(scan(early.substr(0, early.find("HTTP/1.1 200") + 3)).status, HttpHeadStatus::need_more);
  EXPECT_EQ(scan("HTTP/1.1 100 Continue\r\n\r\nSSH-2.0").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n").status_code, 101);
}

TEST(HttpHead, NotHttpFromTheFirstWrongByte) {
  EXPECT_EQ(scan("").status, HttpHeadStatus::need_more);
  EXPECT_EQ(scan("HTTP/1").status, HttpHeadStatus::need_more);
  EXPECT_EQ(scan("X").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan("HTTP/2 200\r\n").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan("http/1.1 200 OK\r\n").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan("HTTP/1.1 20").status, HttpHeadStatus::need_more);
  EXPECT_EQ(scan("HTTP/1.1 2x").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan("HTTP/1.1 2000 OK\r\n").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan("HTTP/1.1  200 OK\r\n").status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan(std::string_view("\x16\x03\x03\x00\x7a\x02", 6)).status, HttpHeadStatus::not_http);  // a ServerHello
}

TEST(HttpHead, GivesUpAtTheCap) {
  std::string big = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: ";
  big += std::string(kHttpHeadScanBytes, 'c');
  big += "\r\n\r\n";
  EXPECT_EQ(scan(std::string_view(big).substr(0, kHttpHeadScanBytes - 1)).status, HttpHeadStatus::need_more);
  EXPECT_EQ(scan(std::string_view(big).substr(0, kHttpHeadScanBytes)).status, HttpHeadStatus::not_http);
  EXPECT_EQ(scan(big).status, HttpHeadStatus::not_http);
  // A head that ends exactly at the cap still counts.
  std::string exact = "HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nX: ";
  exact += std::string(kHttpHeadScanBytes - exact.size() - 4, 'x') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), kHttpHeadScanBytes);
  EXPECT_EQ(scan(exact + "body").content_type, "image/gif");
}

TEST(HttpHead, SniffRequest) {
  const auto sniff = [](std::string_view s) { return sniff_http_request(bytes(s)); };
  EXPECT_EQ(sniff("GET / HTTP/1.1\r\n"), HttpRequestSniff::yes);
  EXPECT_EQ(sniff("CONNECT example.com:443 HTTP/1.1\r\n"), HttpRequestSniff::yes);
  EXPECT_EQ(sniff("OPTIONS * HTTP/1.1\r\n"), HttpRequestSniff::yes);
  EXPECT_EQ(sniff("GET http://example.com/ HTTP/1.1\r\n"), HttpRequestSniff::yes);
  EXPECT_EQ(sniff(""), HttpRequestSniff::need_more);
  EXPECT_EQ(sniff("POS"), HttpRequestSniff::need_more);
  EXPECT_EQ(sniff("POST "), HttpRequestSniff::need_more);
  EXPECT_EQ(sniff("get / HTTP/1.1\r\n"), HttpRequestSniff::no);
  EXPECT_EQ(sniff(" GET /"), HttpRequestSniff::no);
  EXPECT_EQ(sniff("SSH-2.0-OpenSSH_9.6p1 Ubuntu-3\r\n"), HttpRequestSniff::no);
  EXPECT_EQ(sniff("GET \r\n"), HttpRequestSniff::no);
  EXPECT_EQ(sniff("ABCDEFGHIJKLMNOPQRSTUVWXYZ /"), HttpRequestSniff::no);
  EXPECT_EQ(sniff(std::string_view("\x16\x03\x01", 3)), HttpRequestSniff::no);
}

}  // namespace
}  // namespace egw::proxy
