// libFuzzer target: a UDP flow's first datagrams, as a hostile client sends
// them, at the QUIC Initial reader (proxy/quic_initial.h).
// Input: records of [flags: 1][length: 2, big-endian][bytes: length]. Flags
// bit 0 clear: the bytes are a datagram as is (header parsing, protection
// removal, authentication). Set: they are an Initial's plaintext frames,
// which the target protects itself (tests/proxy/quic_initial_builder.h;
// bit 1: QUIC v2, bits 2-7: the packet number), so the fuzzer reaches the
// frame parser, the CRYPTO reassembly and the ClientHello parser behind the
// AEAD. Checks: no crash, the answer well-formed, final once not need_more,
// the same fed one by one as all at once. Each raw datagram also goes to the
// whole-ClientHello reader (proxy/tls_client_hello.h) in both framings: its
// answer well-formed, and its host the one the early SNI scan finds.
// Seeds: tests/fuzz/quic_initial_corpus (the RFCs' Initials, ClientHellos
// over two Initials in both orders, caps, garbage).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "proxy/quic_initial.h"
#include "proxy/tls_client_hello.h"
#include "tests/proxy/quic_initial_builder.h"

using namespace egw::proxy;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::vector<std::byte>> datagrams_of(const std::uint8_t* data, std::size_t size) {
  static const test_data::Bytes dcid = test_data::from_hex("8394c8f03e515708");
  std::vector<std::vector<std::byte>> out;
  std::size_t at = 0;
  while (at + 3 <= size && out.size() < 16) {
    const std::uint8_t flags = data[at];
    const std::size_t declared = static_cast<std::size_t>(data[at + 1]) << 8 | data[at + 2];
    const std::size_t length = std::min(declared, size - at - 3);
    const auto bytes = std::as_bytes(std::span(data + at + 3, length));
    at += 3 + length;
    if ((flags & 1) == 0) {
      out.emplace_back(bytes.begin(), bytes.end());
      continue;
    }
    if (length > 4000) continue;  // one packet's Length is a 2-byte varint in the builder
    const test_data::Bytes frames(bytes.begin(), bytes.end());
    out.push_back(test_data::seal_initial(flags & 2 ? kQuicVersion2 : kQuicVersion1, dcid, flags >> 2, frames,
                                          std::max<std::size_t>(1200, frames.size() + 22 + 16)));
  }
  return out;
}

void check_names(const std::string& host, const std::vector<std::string>& alpn) {
  check(host.size() <= 255);
  if (!host.empty()) check(host.front() != '.' && host.back() != '.');
  for (const char c : host) check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_');
  check(alpn.size() <= 8);
  for (const auto& name : alpn) {
    check(!name.empty());
    for (const char c : name) check(c > 0x20 && c < 0x7f);
  }
}

void whole_client_hello(std::span<const std::byte> bytes) {
  for (const auto framing : {HelloFraming::tls_records, HelloFraming::handshake_message}) {
    const ClientHelloFields f = read_client_hello_fields(bytes, framing);
    check_names(f.host, f.alpn);
    check((f.status == SniStatus::found) == !f.host.empty());
    if (f.status == SniStatus::need_more || f.status == SniStatus::not_tls) check(f.alpn.empty());
    if (framing == HelloFraming::tls_records && f.status == SniStatus::found) {
      const SniScan early = scan_client_hello(bytes);
      check(early.status == SniStatus::found && early.host == f.host);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto datagrams = datagrams_of(data, size);
  QuicInitialReader reader;
  QuicStatus last = QuicStatus::need_more;
  for (const auto& d : datagrams) {
    const QuicInitialScan& s = reader.add_datagram(d);
    if (last != QuicStatus::need_more) check(s.status == last);  // final
    last = s.status;
  }
  const QuicInitialScan& s = reader.result();
  check_names(s.host, s.alpn);
  check((s.status == QuicStatus::found) == !s.host.empty());
  if (s.status == QuicStatus::found || s.status == QuicStatus::no_sni) {
    check(s.version == kQuicVersion1 || s.version == kQuicVersion2);
  }
  std::vector<std::span<const std::byte>> spans(datagrams.begin(), datagrams.end());
  const QuicInitialScan all = scan_quic_initials(spans);
  check(all.status == s.status && all.host == s.host && all.alpn == s.alpn && all.version == s.version);
  for (const auto& d : datagrams) whole_client_hello(d);
  return 0;
}
