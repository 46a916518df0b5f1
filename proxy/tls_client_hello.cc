#include "proxy/tls_client_hello.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace egw::proxy {
namespace {

constexpr std::uint8_t kHandshakeRecord = 22;
constexpr std::uint8_t kClientHello = 1;
constexpr std::uint16_t kServerNameExtension = 0;
constexpr std::uint16_t kAlpnExtension = 16;
constexpr std::size_t kMaxAlpnNames = 8;  // browsers send 2 or 3
constexpr std::uint8_t kHostName = 0;
constexpr std::size_t kMaxRecordPayload = 16384;  // RFC 8446 5.1: 2^14
constexpr std::size_t kMaxHostBytes = 255;        // a DNS name is at most 253

// The handshake layer's bytes, read forward across TLS records as they come:
// record headers are checked and stepped over on the way, so a message split
// over records needs no copy. Sticky: after a short or bad read every further
// read does nothing. Offsets (`end`) are positions in the handshake stream.
class HandshakeReader {
 public:
  enum class State { ok, short_input, bad };

  // records: TLS records around the handshake messages (a TCP stream), or
  // none (the handshake bytes themselves, as a QUIC CRYPTO stream carries them).
  HandshakeReader(std::span<const std::byte> in, bool records)
      : in_(in), record_left_(records ? 0 : static_cast<std::size_t>(-1)) {}
  State state() const { return state_; }
  bool ok() const { return state_ == State::ok; }
  std::size_t position() const { return position_; }
  void fail() { state_ = State::bad; }

  std::uint32_t uint(std::size_t bytes, std::size_t end) {
    std::array<std::uint8_t, 4> b{};
    if (!take(bytes, b.data(), end)) return 0;
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v = v << 8 | b[i];
    return v;
  }
  // Reads `n` bytes into `out` (or skips them if null); all must lie before `end`.
  bool take(std::size_t n, std::uint8_t* out, std::size_t end) {
    if (!ok()) return false;
    if (position_ > end || n > end - position_) {
      fail();
      return false;
    }
    while (n > 0) {
      if (record_left_ == 0 && !open_record()) return false;
      const std::size_t chunk = std::min({n, record_left_, in_.size() - at_});
      if (chunk == 0) {
        state_ = State::short_input;
        return false;
      }
      if (out) {
        std::transform(in_.begin() + static_cast<std::ptrdiff_t>(at_),
                       in_.begin() + static_cast<std::ptrdiff_t>(at_ + chunk), out,
                       [](std::byte b) { return std::to_integer<std::uint8_t>(b); });
        out += chunk;
      }
      at_ += chunk;
      record_left_ -= chunk;
      position_ += chunk;
      n -= chunk;
    }
    return true;
  }

 private:
  // Steps over the next record header. Each byte is checked as soon as it is
  // there, so a non-TLS stream is told apart from its first byte.
  bool open_record() {
    const std::size_t avail = std::min<std::size_t>(in_.size() - at_, 5);
    std::array<std::uint8_t, 5> h{};
    for (std::size_t i = 0; i < avail; ++i) h[i] = std::to_integer<std::uint8_t>(in_[at_ + i]);
    // Every record up to the end of the ClientHello is a handshake record
    // (RFC 8446 5.1: no interleaving), legacy version 3.0 to 3.4.
    if ((avail > 0 && h[0] != kHandshakeRecord) || (avail > 1 && h[1] != 3) || (avail > 2 && h[2] > 4)) {
      fail();
      return false;
    }
    if (avail < 5) {
      state_ = State::short_input;
      return false;
    }
    const std::size_t length = static_cast<std::size_t>(h[3]) << 8 | h[4];
    // Zero-length handshake fragments are forbidden (RFC 8446 5.1).
    if (length == 0 || length > kMaxRecordPayload) {
      fail();
      return false;
    }
    at_ += 5;
    record_left_ = length;
    return true;
  }

  std::span<const std::byte> in_;
  std::size_t at_ = 0;           // in in_
  std::size_t record_left_ = 0;  // payload of the current record not yet read
  std::size_t position_ = 0;     // in the handshake stream
  State state_ = State::ok;
};

// The host name as we report it, or empty if it is not a plausible one (it
// ends up in logs and metrics, so nothing but host name characters).
std::string host_of(const std::uint8_t* name, std::size_t n) {
  if (n > 0 && name[n - 1] == '.') --n;
  std::string host;
  for (std::size_t i = 0; i < n; ++i) {
    char c = static_cast<char>(name[i]);
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    if (!ok) return {};
    host += c;
  }
  // Labels must not be empty: ".cdn.example.com" must not pass for a name under cdn.example.com.
  if (host.starts_with('.') || host.ends_with('.') || host.find("..") != std::string::npos) return {};
  return host;
}

// Opens a vector whose length takes `bytes` bytes: its end, which must lie
// within `parent_end`.
std::size_t vector_end(HandshakeReader& h, std::size_t bytes, std::size_t parent_end) {
  const std::size_t length = h.uint(bytes, parent_end);
  const std::size_t end = h.position() + length;
  if (h.ok() && end > parent_end) h.fail();
  return end;
}

SniScan stop(const HandshakeReader& h) {
  return {h.state() == HandshakeReader::State::bad ? SniStatus::not_tls : SniStatus::need_more, {}};
}

// The server_name extension's body: its first host_name entry.
SniScan read_server_name(HandshakeReader& h, std::size_t extension_end) {
  const std::size_t list_end = vector_end(h, 2, extension_end);
  while (h.ok() && h.position() < list_end) {
    const auto name_type = h.uint(1, list_end);
    const std::size_t name_end = vector_end(h, 2, list_end);
    if (!h.ok()) break;
    const std::size_t length = name_end - h.position();
    if (name_type != kHostName) {
      h.take(length, nullptr, name_end);
      continue;
    }
    if (length == 0 || length > kMaxHostBytes) return {SniStatus::no_sni, {}};
    std::array<std::uint8_t, kMaxHostBytes> name{};
    if (!h.take(length, name.data(), name_end)) break;
    std::string host = host_of(name.data(), length);
    if (host.empty()) return {SniStatus::no_sni, {}};
    return {SniStatus::found, std::move(host)};
  }
  if (h.ok()) return {SniStatus::no_sni, {}};  // a server_name extension without a host name
  return stop(h);
}

// The ALPN extension's body (RFC 7301 3.1): the protocol names that are
// printable ASCII (they end up in logs and metrics), at most kMaxAlpnNames.
void read_alpn(HandshakeReader& h, std::size_t extension_end, std::vector<std::string>& names) {
  const std::size_t list_end = vector_end(h, 2, extension_end);
  while (h.ok() && h.position() < list_end) {
    const std::size_t name_end = vector_end(h, 1, list_end);
    if (!h.ok()) return;
    const std::size_t length = name_end - h.position();
    std::array<std::uint8_t, 255> name{};
    if (!h.take(length, name.data(), name_end)) return;
    const bool printable = std::all_of(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(length),
                                       [](std::uint8_t c) { return c > 0x20 && c < 0x7f; });
    if (length > 0 && printable && names.size() < kMaxAlpnNames) {
      names.emplace_back(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(length));
    }
  }
}

// The ClientHello body (RFC 8446 4.1.2). Without `whole`: up to the
// server_name extension, answered as soon as it has arrived. With it: every
// extension to the end of the message, the ALPN names into whole->alpn.
SniScan read_client_hello(HandshakeReader& h, std::size_t end, ClientHelloFields* whole) {
  h.take(2 + 32, nullptr, end);  // legacy_version, random
  const std::size_t session_id = h.uint(1, end);
  if (session_id > 32) h.fail();
  h.take(session_id, nullptr, end);
  const std::size_t suites = h.uint(2, end);
  if (h.ok() && (suites < 2 || suites % 2 != 0)) h.fail();
  h.take(suites, nullptr, end);
  const std::size_t compression = h.uint(1, end);
  if (h.ok() && compression < 1) h.fail();
  h.take(compression, nullptr, end);
  if (!h.ok()) return stop(h);
  if (h.position() == end) return {SniStatus::no_sni, {}};  // no extensions at all (SSL 3.0 style)

  const std::size_t extensions_end = vector_end(h, 2, end);
  SniScan sni{SniStatus::no_sni, {}};
  bool seen_server_name = false;
  while (h.ok() && h.position() < extensions_end) {
    const auto type = h.uint(2, extensions_end);
    const std::size_t extension_end = vector_end(h, 2, extensions_end);
    if (!h.ok()) break;
    if (type == kServerNameExtension && !seen_server_name) {
      SniScan s = read_server_name(h, extension_end);
      if (!whole || !h.ok()) return s;
      seen_server_name = true;
      sni = std::move(s);
    } else if (type == kAlpnExtension && whole && whole->alpn.empty()) {
      read_alpn(h, extension_end, whole->alpn);
    }
    if (h.ok()) h.take(extension_end - h.position(), nullptr, extension_end);  // the rest, unread
  }
  if (!h.ok()) return stop(h);
  return sni;
}

// The handshake message header, then the ClientHello.
SniScan read_handshake(HandshakeReader& h, ClientHelloFields* whole) {
  constexpr std::size_t kUnbounded = static_cast<std::size_t>(-1);
  const auto type = h.uint(1, kUnbounded);
  if (h.ok() && type != kClientHello) h.fail();
  const std::size_t length = h.uint(3, kUnbounded);
  return h.ok() ? read_client_hello(h, h.position() + length, whole) : stop(h);
}

}  // namespace

SniScan scan_client_hello(std::span<const std::byte> first_bytes) {
  const auto in = first_bytes.first(std::min(first_bytes.size(), kClientHelloScanBytes));
  HandshakeReader h(in, true);
  SniScan result = read_handshake(h, nullptr);
  // Out of bytes at the cap: more would not be looked at, so give up.
  if (result.status == SniStatus::need_more && first_bytes.size() >= kClientHelloScanBytes) result.status = SniStatus::no_sni;
  return result;
}

ClientHelloFields read_client_hello_fields(std::span<const std::byte> bytes, HelloFraming framing) {
  const auto in = bytes.first(std::min(bytes.size(), kClientHelloScanBytes));
  HandshakeReader h(in, framing == HelloFraming::tls_records);
  ClientHelloFields fields;
  SniScan sni = read_handshake(h, &fields);
  fields.status = sni.status;
  fields.host = std::move(sni.host);
  if (fields.status == SniStatus::need_more && bytes.size() >= kClientHelloScanBytes) fields.status = SniStatus::no_sni;
  if (fields.status == SniStatus::not_tls || fields.status == SniStatus::need_more) fields.alpn.clear();
  return fields;
}

}  // namespace egw::proxy
