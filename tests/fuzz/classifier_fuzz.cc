// libFuzzer target: a stream's first bytes, as a hostile client or server
// sends them, at the proxy's scanners (proxy/tls_client_hello.h,
// proxy/http_head.h), the Classifier and the hub's DestinationPolicy.
// Input: two bytes choosing a split point, then the stream's bytes. Each
// scanner sees the part before the split, then all of it, as it would while
// the bytes arrive: it must never crash, and an answer other than need_more
// on the part must be the answer on the whole (they read forward only).
// Seeds: tests/fuzz/classifier_corpus (a ClientHello, one cut into small
// records, HTTP heads, garbage).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "proxy/classifier.h"
#include "proxy/destination_policy.h"
#include "proxy/http_head.h"
#include "proxy/tls_client_hello.h"

using namespace egw;
using namespace egw::proxy;

namespace {

config::DestinationRule rule(std::string_view text) {
  return std::get<config::DestinationRule>(config::parse_destination_rule(text));
}

config::ClassifyConfig fuzz_config() {
  config::ClassifyConfig c;
  c.sni = {{"*.cdn.example.com", ContentClass::image}, {"www.example.com", ContentClass::html}};
  c.destinations = {{rule("10.2.0.0/16:21,22"), ContentClass::bulk}};
  return c;
}

void check(bool ok) {
  if (!ok) std::abort();
}

void scanners(std::span<const std::byte> part, std::span<const std::byte> whole) {
  const SniScan sp = scan_client_hello(part);
  const SniScan sw = scan_client_hello(whole);
  if (sp.status != SniStatus::need_more) check(sp.status == sw.status && sp.host == sw.host);
  if (sw.status == SniStatus::found) {
    check(!sw.host.empty() && sw.host.size() <= 255 && sw.host.front() != '.' && sw.host.back() != '.');
    for (const char c : sw.host) check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_');
  } else {
    check(sw.host.empty());
  }

  const HttpResponseHead hp = scan_http_response_head(part);
  const HttpResponseHead hw = scan_http_response_head(whole);
  if (hp.status != HttpHeadStatus::need_more) {
    check(hp.status == hw.status && hp.status_code == hw.status_code && hp.content_type == hw.content_type);
  }
  if (hw.content_type) check(hw.status == HttpHeadStatus::complete && hw.content_type->find('/') != std::string::npos);

  const HttpRequestSniff rp = sniff_http_request(part);
  if (rp != HttpRequestSniff::need_more) check(rp == sniff_http_request(whole));
}

void classifier(std::span<const std::byte> part, std::span<const std::byte> whole, bool at_rule) {
  static const Classifier k(fuzz_config());
  tunnel::Destination d;
  d.address = {10, static_cast<std::uint8_t>(at_rule ? 2 : 3), 0, 1};
  d.port = 22;
  const auto op = k.classify_open(d, part);
  const auto ow = k.classify_open(d, whole);
  check(op.from_destination == at_rule && ow.from_destination == at_rule);
  if (!op.need_more) check(op.cls == ow.cls && !ow.need_more);
  const auto rp = k.classify_response(part);
  const auto rw = k.classify_response(whole);
  if (rp.verdict != Classifier::ResponseVerdict::need_more) check(rp.verdict == rw.verdict && rp.cls == rw.cls);
}

// The first 19 bytes as a destination: family, 16 address bytes, port.
void policy(std::span<const std::byte> bytes) {
  static const DestinationPolicy p({rule("*"), rule("127.0.0.1/32:8080")}, {});
  if (bytes.size() < 19) return;
  tunnel::Destination d;
  d.family = std::to_integer<int>(bytes[0]) & 1 ? tunnel::Destination::Family::ipv6 : tunnel::Destination::Family::ipv4;
  std::memcpy(d.address.data(), bytes.data() + 1, 16);
  d.port = static_cast<std::uint16_t>(std::to_integer<int>(bytes[17]) << 8 | std::to_integer<int>(bytes[18]));
  const Refusal r = p.check(d);
  check(!to_string(r).empty());
  if (d.port == 0) check(r == Refusal::unspecified);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t split = static_cast<std::size_t>(data[0]) << 8 | data[1];
  const auto whole = std::as_bytes(std::span(data + 2, size - 2));
  const auto part = whole.first(split % (whole.size() + 1));
  scanners(part, whole);
  classifier(part, whole, (data[1] & 1) != 0);
  policy(whole);
  return 0;
}
