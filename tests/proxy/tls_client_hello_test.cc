// SNI from a client's first bytes: a real capture, ClientHellos split over
// records and segments at every byte, and hostile lengths that must end in
// not_tls (or need_more), never in a read out of bounds.
#include "proxy/tls_client_hello.h"

#include <gtest/gtest.h>

#include "tests/proxy/captured_client_hello.h"
#include "tests/proxy/client_hello_builder.h"

namespace egw::proxy {
namespace {

using namespace test_data;

SniScan scan(const Bytes& b, std::size_t n = static_cast<std::size_t>(-1)) {
  return scan_client_hello(std::span(b).first(std::min(n, b.size())));
}
Bytes bytes_of(std::span<const std::byte> s) { return {s.begin(), s.end()}; }
Bytes text(const std::string& s) {
  Bytes b;
  put(b, s);
  return b;
}

TEST(TlsClientHello, CapturedClientHello) {
  const SniScan s = scan_client_hello(captured_client_hello());
  EXPECT_EQ(s.status, SniStatus::found);
  EXPECT_EQ(s.host, "www.example.com");  // sent as www.Example.com
}

// Every prefix of the capture: need_more until the host has arrived, then
// found without waiting for the rest of the message.
TEST(TlsClientHello, CapturedSplitAtEveryByte) {
  const Bytes hello = bytes_of(captured_client_hello());
  for (std::size_t n = 0; n <= hello.size(); ++n) {
    const SniScan s = scan(hello, n);
    if (n < kCapturedHostEnd) {
      EXPECT_EQ(s.status, SniStatus::need_more) << n;
    } else {
      EXPECT_EQ(s.status, SniStatus::found) << n;
      EXPECT_EQ(s.host, "www.example.com");
    }
  }
}

// The same message cut into records of every size from 1 byte, each stream
// then fed a byte at a time.
TEST(TlsClientHello, SpansRecordsOfAnySize) {
  const Bytes hello = bytes_of(captured_client_hello());
  const Bytes message(hello.begin() + 5, hello.end());
  for (std::size_t fragment = 1; fragment <= 64; ++fragment) {
    const Bytes stream = records(message, fragment);
    SniStatus last = SniStatus::need_more;
    for (std::size_t n = 0; n <= stream.size() && last == SniStatus::need_more; ++n) last = scan(stream, n).status;
    EXPECT_EQ(last, SniStatus::found) << fragment;
    EXPECT_EQ(scan(stream).host, "www.example.com") << fragment;
  }
}

TEST(TlsClientHello, BuiltClientHellos) {
  EXPECT_EQ(scan(client_hello_records("img.cdn.example.com")).host, "img.cdn.example.com");
  EXPECT_EQ(scan(client_hello_records("example.com.")).host, "example.com");  // trailing dot dropped
  // The server_name extension after others, and a non-host name before the host.
  Bytes list;
  put(list, 7, 1);
  put(list, 3, 2);
  put(list, "abc");
  put(list, 0, 1);
  put(list, 11, 2);
  put(list, "example.org");
  Bytes body;
  put(body, list.size(), 2);
  put(body, list);
  const Bytes hello = records(client_hello({extension(10, Bytes(8, std::byte{1})), extension(0, body)}));
  EXPECT_EQ(scan(hello).status, SniStatus::found);
  EXPECT_EQ(scan(hello).host, "example.org");
}

// The whole message, for its ALPN too: from TLS records (a TCP stream) or
// bare (a QUIC CRYPTO stream); need_more until its last byte, whichever
// extension comes first; names that are not printable are left out.
TEST(TlsClientHello, FieldsOfTheWholeMessage) {
  Bytes alpn_list;
  for (const std::string& name : std::vector<std::string>{"h2", "\x01" "bad", "http/1.1"}) {
    put(alpn_list, name.size(), 1);
    put(alpn_list, name);
  }
  Bytes alpn;
  put(alpn, alpn_list.size(), 2);
  put(alpn, alpn_list);
  const Bytes message = client_hello({extension(16, alpn), sni_extension("Example.com"), extension(43, Bytes(3, std::byte{3}))});
  const std::vector<std::string> expected{"h2", "http/1.1"};
  for (const auto framing : {HelloFraming::tls_records, HelloFraming::handshake_message}) {
    const Bytes bytes = framing == HelloFraming::tls_records ? records(message, 100) : message;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const ClientHelloFields f = read_client_hello_fields(std::span(bytes).first(n), framing);
      EXPECT_EQ(f.status, SniStatus::need_more) << n;
      EXPECT_TRUE(f.alpn.empty());
    }
    const ClientHelloFields f = read_client_hello_fields(bytes, framing);
    EXPECT_EQ(f.status, SniStatus::found);
    EXPECT_EQ(f.host, "example.com");
    EXPECT_EQ(f.alpn, expected);
  }
  const ClientHelloFields no_host = read_client_hello_fields(client_hello({extension(16, alpn)}), HelloFraming::handshake_message);
  EXPECT_EQ(no_host.status, SniStatus::no_sni);
  EXPECT_EQ(no_host.alpn, expected);
  EXPECT_EQ(read_client_hello_fields(records(message), HelloFraming::handshake_message).status, SniStatus::not_tls);
  EXPECT_EQ(read_client_hello_fields(message, HelloFraming::tls_records).status, SniStatus::not_tls);
}

TEST(TlsClientHello, NoUsableServerName) {
  EXPECT_EQ(scan(records(client_hello({}))).status, SniStatus::no_sni);
  EXPECT_EQ(scan(records(client_hello({}, false))).status, SniStatus::no_sni);  // no extensions block
  EXPECT_EQ(scan(records(client_hello({extension(43, Bytes(3, std::byte{3}))}))).status, SniStatus::no_sni);
  EXPECT_EQ(scan(records(client_hello({sni_extension("example.com", 1)}))).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records("")).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records("bad host")).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records("evil\nhost")).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records(".cdn.example.com")).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records("a..example.com")).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records(".")).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records("example.com..")).status, SniStatus::no_sni);  // found by classifier_fuzz
  EXPECT_EQ(scan(client_hello_records(std::string(256, 'a'))).status, SniStatus::no_sni);
  EXPECT_EQ(scan(client_hello_records(std::string(255, 'a'))).status, SniStatus::found);
}

TEST(TlsClientHello, OtherProtocolsFromTheFirstByte) {
  EXPECT_EQ(scan(text("G")).status, SniStatus::not_tls);
  EXPECT_EQ(scan(text("GET / HTTP/1.1\r\n")).status, SniStatus::not_tls);
  EXPECT_EQ(scan(text("SSH-2.0-OpenSSH_9.6\r\n")).status, SniStatus::not_tls);
  EXPECT_EQ(scan(Bytes{std::byte{0x80}, std::byte{0x2e}, std::byte{0x01}}).status, SniStatus::not_tls);  // SSLv2
  EXPECT_EQ(scan(Bytes{}).status, SniStatus::need_more);
  EXPECT_EQ(scan(Bytes{std::byte{0x16}}).status, SniStatus::need_more);
  EXPECT_EQ(scan(Bytes{std::byte{0x16}, std::byte{0x02}}).status, SniStatus::not_tls);
  EXPECT_EQ(scan(Bytes{std::byte{0x16}, std::byte{0x03}, std::byte{0x05}}).status, SniStatus::not_tls);
}

TEST(TlsClientHello, BadRecordLayer) {
  const Bytes message = client_hello({sni_extension("example.com")});
  Bytes zero_length;
  put(zero_length, 0x1603010000, 5);
  EXPECT_EQ(scan(zero_length).status, SniStatus::not_tls);
  Bytes too_long;
  put(too_long, 0x1603014001, 5);  // 16385 > 2^14
  put(too_long, message);
  EXPECT_EQ(scan(too_long).status, SniStatus::not_tls);
  // An alert record between two fragments of the ClientHello.
  Bytes interleaved = records(Bytes(message.begin(), message.begin() + 10));
  put(interleaved, 0x1503010002, 5);
  put(interleaved, 0x0228, 2);
  put(interleaved, records(Bytes(message.begin() + 10, message.end())));
  EXPECT_EQ(scan(interleaved).status, SniStatus::not_tls);
  // A ServerHello (type 2) is not what a client sends.
  Bytes server_hello = message;
  server_hello[0] = std::byte{2};
  EXPECT_EQ(scan(records(server_hello)).status, SniStatus::not_tls);
}

// Offsets into client_hello(): 4 handshake header, 2 version, 32 random.
constexpr std::size_t kSessionId = 4 + 2 + 32;
constexpr std::size_t kSuites = kSessionId + 1 + 32;
constexpr std::size_t kExtensions = kSuites + 2 + 4 + 1 + 1;

Bytes patched(Bytes message, std::size_t at, std::uint64_t value, int bytes) {
  Bytes v;
  put(v, value, bytes);
  std::copy(v.begin(), v.end(), message.begin() + static_cast<std::ptrdiff_t>(at));
  return records(message);
}

TEST(TlsClientHello, HostileLengths) {
  const Bytes m = client_hello({sni_extension("example.com")});
  ASSERT_EQ(scan(patched(m, kSessionId, 32, 1)).status, SniStatus::found);  // the offsets are right
  EXPECT_EQ(scan(patched(m, kSessionId, 33, 1)).status, SniStatus::not_tls);
  EXPECT_EQ(scan(patched(m, kSuites, 3, 2)).status, SniStatus::not_tls);   // odd
  EXPECT_EQ(scan(patched(m, kSuites, 0, 2)).status, SniStatus::not_tls);   // none
  EXPECT_EQ(scan(patched(m, kSuites, 0xfffe, 2)).status, SniStatus::not_tls);  // past the message
  EXPECT_EQ(scan(patched(m, kSuites + 6, 0, 1)).status, SniStatus::not_tls);   // no compression method
  EXPECT_EQ(scan(patched(m, kExtensions, 0xffff, 2)).status, SniStatus::not_tls);
  EXPECT_EQ(scan(patched(m, kExtensions + 4, 0xffff, 2)).status, SniStatus::not_tls);  // extension length
  EXPECT_EQ(scan(patched(m, kExtensions + 6, 0xffff, 2)).status, SniStatus::not_tls);  // server name list
  EXPECT_EQ(scan(patched(m, kExtensions + 9, 0xffff, 2)).status, SniStatus::not_tls);  // host name length
  EXPECT_EQ(scan(patched(m, 1, 40, 3)).status, SniStatus::not_tls);  // message shorter than its fields
  // A message that claims 16 MB: the host still comes out as soon as it is there.
  EXPECT_EQ(scan(patched(m, 1, 0xffffff, 3)).status, SniStatus::found);
}

// A ClientHello whose host would only come after the cap: no_sni once the
// cap is reached, need_more before.
TEST(TlsClientHello, GivesUpAtTheCap) {
  const Bytes stream = records(client_hello({extension(21, Bytes(20000, std::byte{0})), sni_extension("example.com")}));
  EXPECT_EQ(scan(stream, kClientHelloScanBytes - 1).status, SniStatus::need_more);
  EXPECT_EQ(scan(stream, kClientHelloScanBytes).status, SniStatus::no_sni);
  EXPECT_EQ(scan(stream).status, SniStatus::no_sni);
  const Bytes small = client_hello_records("example.com");
  Bytes padded = small;
  padded.resize(kClientHelloScanBytes * 2);  // whatever follows the message is not looked at
  EXPECT_EQ(scan(padded).status, SniStatus::found);
}

// Every byte of the capture replaced in three ways, every prefix scanned: no
// crash (ASan watches), and a prefix's final answer is the whole input's.
TEST(TlsClientHello, MutatedCaptureIsDecidedByItsPrefix) {
  const Bytes hello = bytes_of(captured_client_hello());
  for (std::size_t at = 0; at < hello.size(); ++at) {
    for (const std::uint8_t v : {std::uint8_t{0}, std::uint8_t{0xff}, std::uint8_t{0x80}}) {
      Bytes mutated = hello;
      mutated[at] = static_cast<std::byte>(v ^ (v == 0x80 ? std::to_integer<std::uint8_t>(hello[at]) : 0));
      const SniScan whole = scan(mutated);
      for (std::size_t n = 0; n < mutated.size(); n += 3) {
        const SniScan part = scan(mutated, n);
        if (part.status == SniStatus::need_more) continue;
        ASSERT_EQ(part.status, whole.status) << at << " " << n;
        ASSERT_EQ(part.host, whole.host);
      }
    }
  }
}

}  // namespace
}  // namespace egw::proxy
