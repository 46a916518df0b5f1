// The server name (SNI, RFC 6066) from the first bytes a TLS client sends,
// so the branch can classify a stream before the server has said anything.
//
// Stateless and incremental: call again with all the bytes so far until the
// answer is not need_more. A ClientHello may span several TLS records and TCP
// segments (post-quantum key shares make it ~1.8 KB); the host is returned as
// soon as it has arrived, the rest of the message unread. Hostile input: every
// length is checked against its enclosing one before it is used, records are
// read in place (no reassembly buffer), and only the first
// kClientHelloScanBytes are ever looked at.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace egw::proxy {

// 16 KiB: a full-size record; ClientHellos seen in practice are under 2 KB.
inline constexpr std::size_t kClientHelloScanBytes = 16 * 1024;

enum class SniStatus {
  need_more,  // a ClientHello so far, the server name not reached yet
  not_tls,    // not a TLS handshake starting with a ClientHello, or malformed
  no_sni,     // a ClientHello without a usable host name (or none within the cap)
  found,
};

struct SniScan {
  SniStatus status = SniStatus::need_more;
  std::string host;  // found: lowercase, [a-z0-9._-] only, no empty labels or trailing dot
};

SniScan scan_client_hello(std::span<const std::byte> first_bytes);

// The whole ClientHello read, for its host and its ALPN protocol names: a
// QUIC Initial's CRYPTO stream (proxy/quic_initial.h) is the handshake
// message itself, without TLS records, and arrives whole in a few packets.
// found / no_sni only once the message has arrived to its last extension;
// need_more before; not_tls if malformed; the same cap as above.
enum class HelloFraming { tls_records, handshake_message };
struct ClientHelloFields {
  SniStatus status = SniStatus::need_more;
  std::string host;               // as SniScan::host
  std::vector<std::string> alpn;  // found or no_sni: as sent, printable ASCII only, at most 8
};
ClientHelloFields read_client_hello_fields(std::span<const std::byte> bytes, HelloFraming framing);

}  // namespace egw::proxy
