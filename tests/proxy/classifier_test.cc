// The classifier's two decisions: at the branch when a stream opens
// (destination rule > SNI rule > default), at the hub from the response head.
#include "proxy/classifier.h"

#include <gtest/gtest.h>

#include "tests/proxy/captured_client_hello.h"
#include "tests/proxy/client_hello_builder.h"

namespace egw::proxy {
namespace {

using C = ContentClass;
using Verdict = Classifier::ResponseVerdict;
using test_data::Bytes;
using test_data::client_hello_records;

config::DestinationRule rule(std::string_view text) {
  return std::get<config::DestinationRule>(config::parse_destination_rule(text));
}

tunnel::Destination v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint16_t port) {
  tunnel::Destination x;
  x.address[0] = a; x.address[1] = b; x.address[2] = c; x.address[3] = d;
  x.port = port;
  return x;
}

config::ClassifyConfig example_config() {
  config::ClassifyConfig c;
  c.default_class = C::bulk;
  c.content_types = {{"image/svg+xml", C::script}};
  for (const auto& t : config::ClassifyConfig::default_content_types()) c.content_types.push_back(t);
  c.sni = {{"*.cdn.example.com", C::image}, {"www.example.com", C::html}, {"API.Example.com", C::script}};
  c.destinations = {{rule("10.2.0.0/16:21,22"), C::bulk}, {rule("192.0.2.0/24:443"), C::html}};
  c.detect_applications = false;  // the admin's rules alone (classifier_stages_test.cc has the rest)
  c.unknown_host_class = C::bulk;
  c.learned_cache_entries = 0;  // every case at one address: the learned cache would answer for unmatched names
  return c;
}

std::span<const std::byte> text(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

TEST(Classifier, DestinationRuleWinsAndIsFinal) {
  const Classifier k(example_config());
  const Bytes hello = client_hello_records("img.cdn.example.com");
  const auto d = k.classify_open(v4(192, 0, 2, 9, 443), hello);
  EXPECT_EQ(d.cls, C::html);
  EXPECT_TRUE(d.from_destination);
  EXPECT_FALSE(d.need_more);
  EXPECT_EQ(k.classify_open(v4(10, 2, 3, 4, 22), {}).cls, C::bulk);
  EXPECT_TRUE(k.classify_open(v4(10, 2, 3, 4, 22), {}).from_destination);
}

TEST(Classifier, SniRules) {
  const Classifier k(example_config());
  const auto at = v4(198, 51, 100, 1, 443);
  EXPECT_EQ(k.classify_open(at, client_hello_records("img.cdn.example.com")).cls, C::image);
  EXPECT_EQ(k.classify_open(at, client_hello_records("a.b.CDN.example.com")).cls, C::image);  // several labels
  EXPECT_EQ(k.classify_open(at, client_hello_records("cdn.example.com")).cls, C::bulk);      // not the name itself
  EXPECT_EQ(k.classify_open(at, client_hello_records("xcdn.example.com")).cls, C::bulk);
  EXPECT_EQ(k.classify_open(at, client_hello_records("api.example.com")).cls, C::script);    // pattern lowercased
  EXPECT_EQ(k.classify_open(at, test_data::captured_client_hello()).cls, C::html);           // www.Example.com
  const auto d = k.classify_open(at, client_hello_records("www.example.com"));
  EXPECT_FALSE(d.from_destination);
  EXPECT_FALSE(d.need_more);
}

TEST(Classifier, DefaultAndNeedMore) {
  const Classifier k(example_config());
  const auto at = v4(198, 51, 100, 1, 443);
  const auto empty = k.classify_open(at, {});
  EXPECT_EQ(empty.cls, C::bulk);
  EXPECT_TRUE(empty.need_more);  // the ClientHello may still come
  const Bytes hello = client_hello_records("www.example.com");
  const auto partial = k.classify_open(at, std::span(hello).first(20));
  EXPECT_EQ(partial.cls, C::bulk);
  EXPECT_TRUE(partial.need_more);
  const auto http = k.classify_open(v4(198, 51, 100, 1, 80), text("GET / HTTP/1.1\r\n"));
  EXPECT_EQ(http.cls, C::bulk);
  EXPECT_FALSE(http.need_more);
  // No SNI rules and no detection: nothing to wait for.
  config::ClassifyConfig plain;
  plain.detect_applications = false;
  plain.default_class = C::script;
  const auto d = Classifier(plain).classify_open(at, {});
  EXPECT_EQ(d.cls, C::script);
  EXPECT_FALSE(d.need_more);
}

TEST(Classifier, ResponseContentType) {
  const Classifier k(example_config());
  const auto response = [&](std::string_view s) { return k.classify_response(text(s)); };
  auto r = response("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n");
  EXPECT_EQ(r.verdict, Verdict::matched);
  EXPECT_EQ(r.cls, C::html);
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\nContent-Type: image/webp\r\n\r\n").cls, C::image);
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\nContent-Type: IMAGE/SVG+XML\r\n\r\n").cls, C::script);  // first match wins
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n\r\n").cls, C::script);
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n").verdict, Verdict::no_match);
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\nContent-Type: imagex/png\r\n\r\n").verdict, Verdict::no_match);
  EXPECT_EQ(response("HTTP/1.1 304 Not Modified\r\n\r\n").verdict, Verdict::no_match);
  EXPECT_EQ(response("HTTP/1.1 200 OK\r\nContent-Type: text/ht").verdict, Verdict::need_more);
  EXPECT_EQ(response("").verdict, Verdict::need_more);
  EXPECT_EQ(response("\x16\x03\x03").verdict, Verdict::no_match);
  EXPECT_EQ(response("SSH-2.0-OpenSSH_9.6\r\n").cls, C::bulk);
}

TEST(Classifier, NoContentTypeRulesDecideAtOnce) {
  config::ClassifyConfig c;
  c.content_types.clear();
  const Classifier k(c);
  EXPECT_EQ(k.classify_response({}).verdict, Verdict::no_match);
  EXPECT_EQ(k.classify_response(text("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")).verdict, Verdict::no_match);
}

TEST(Classifier, SingleRuleLookups) {
  const Classifier k(example_config());
  EXPECT_EQ(k.class_of_destination(v4(10, 2, 0, 1, 21)), C::bulk);
  EXPECT_EQ(k.class_of_destination(v4(10, 2, 0, 1, 80)), std::nullopt);
  EXPECT_EQ(k.class_of_host("x.cdn.example.com"), C::image);
  EXPECT_EQ(k.class_of_host("example.com"), std::nullopt);
  EXPECT_EQ(k.class_of_media_type("image/png"), C::image);
  EXPECT_EQ(k.class_of_media_type("image"), std::nullopt);
  EXPECT_EQ(k.default_class(), C::bulk);
}

}  // namespace
}  // namespace egw::proxy
