#include "proxy/quic_initial.h"

// For SHA256_Init and friends (see Hmac below).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "proxy/tls_client_hello.h"
#include "tunnel/wire_reader.h"

namespace egw::proxy {
namespace {

using tunnel::WireReader;

constexpr std::size_t kMinClientDatagramBytes = 1200;  // RFC 9000 14.1: servers drop smaller Initials
constexpr std::size_t kMaxConnectionIdBytes = 20;      // RFC 9000 17.2 (v1 and v2)
constexpr std::size_t kSampleOffsetBytes = 4;          // RFC 9001 5.4.2: the sample skips 4 bytes of packet number
constexpr std::size_t kSampleBytes = 16;
constexpr std::size_t kTagBytes = 16;
constexpr std::size_t kMaxCryptoRanges = 32;  // out-of-order pieces held apart before giving up

// What differs between the versions we read (RFC 9369 3.2, 3.3).
struct Version {
  std::uint32_t number;
  std::array<std::uint8_t, 20> salt;
  std::string_view key_label, iv_label, hp_label;
  unsigned initial_type, retry_type;  // the long header's two type bits
};
constexpr Version kV1{kQuicVersion1,
                      {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
                       0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a},
                      "quic key", "quic iv", "quic hp", 0, 3};
constexpr Version kV2{kQuicVersion2,
                      {0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
                       0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9},
                      "quicv2 key", "quicv2 iv", "quicv2 hp", 1, 0};

const Version* version_of(std::uint32_t number) {
  if (number == kV1.number) return &kV1;
  if (number == kV2.number) return &kV2;
  return nullptr;
}

// AES-128-ECB and AES-128-GCM, fetched once per thread and only re-keyed
// per use: OpenSSL 3's implicit fetch behind EVP_aes_128_gcm() and a new
// context per packet would cost more than the whole parse.
class InitialCrypto {
 public:
  InitialCrypto()
      : ecb_(EVP_CIPHER_fetch(nullptr, "AES-128-ECB", nullptr)),
        gcm_(EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr)),
        ecb_ctx_(EVP_CIPHER_CTX_new()),
        gcm_ctx_(EVP_CIPHER_CTX_new()) {
    ok_ = ecb_ && gcm_ && ecb_ctx_ && gcm_ctx_ &&
          EVP_EncryptInit_ex(ecb_ctx_, ecb_, nullptr, nullptr, nullptr) == 1 &&
          EVP_CIPHER_CTX_set_padding(ecb_ctx_, 0) == 1 &&
          EVP_DecryptInit_ex(gcm_ctx_, gcm_, nullptr, nullptr, nullptr) == 1;
  }
  ~InitialCrypto() {
    EVP_CIPHER_CTX_free(gcm_ctx_);
    EVP_CIPHER_CTX_free(ecb_ctx_);
    EVP_CIPHER_free(gcm_);
    EVP_CIPHER_free(ecb_);
  }
  InitialCrypto(const InitialCrypto&) = delete;
  InitialCrypto& operator=(const InitialCrypto&) = delete;

  // The header protection mask: AES-128-ECB of the sample (RFC 9001 5.4.3).
  bool mask(const std::array<std::uint8_t, 16>& hp, const std::uint8_t* sample, std::uint8_t (&out)[16]) {
    int n = 0;
    return ok_ && rekey(ecb_ctx_, ecb_key_, hp) &&
           EVP_EncryptUpdate(ecb_ctx_, out, &n, sample, kSampleBytes) == 1 && n == static_cast<int>(kSampleBytes);
  }
  // AES-128-GCM open in place; `text` is followed by its tag.
  bool open(const QuicInitialKeys& k, const std::uint8_t (&nonce)[12], std::span<const std::uint8_t> aad,
            std::span<std::uint8_t> text) {
    int n = 0;
    const int length = static_cast<int>(text.size());
    return ok_ && rekey(gcm_ctx_, gcm_key_, k.key) &&
           EVP_DecryptInit_ex(gcm_ctx_, nullptr, nullptr, nullptr, nonce) == 1 &&
           EVP_DecryptUpdate(gcm_ctx_, nullptr, &n, aad.data(), static_cast<int>(aad.size())) == 1 &&
           EVP_DecryptUpdate(gcm_ctx_, text.data(), &n, text.data(), length) == 1 &&
           EVP_CIPHER_CTX_ctrl(gcm_ctx_, EVP_CTRL_GCM_SET_TAG, kTagBytes, text.data() + length) == 1 &&
           EVP_DecryptFinal_ex(gcm_ctx_, text.data() + length, &n) == 1;
  }

 private:
  // A connection's packets share their keys: the key schedule (and GCM's
  // hash key) is computed again only when the key changes.
  static bool rekey(EVP_CIPHER_CTX* ctx, std::optional<std::array<std::uint8_t, 16>>& current,
                    const std::array<std::uint8_t, 16>& key) {
    if (current == key) return true;
    current.reset();
    const bool encrypt = EVP_CIPHER_CTX_is_encrypting(ctx) == 1;
    if (EVP_CipherInit_ex(ctx, nullptr, nullptr, key.data(), nullptr, encrypt ? 1 : 0) != 1) return false;
    current = key;
    return true;
  }

 private:
  EVP_CIPHER* ecb_;
  EVP_CIPHER* gcm_;
  EVP_CIPHER_CTX* ecb_ctx_;
  EVP_CIPHER_CTX* gcm_ctx_;
  std::optional<std::array<std::uint8_t, 16>> ecb_key_, gcm_key_;
  bool ok_ = false;
};

InitialCrypto& crypto() {
  thread_local InitialCrypto c;
  return c;
}

// HMAC-SHA256 (RFC 2104) keyed once for several messages: the padded key's
// two blocks are hashed once, each message then costs two compressions.
// OpenSSL's low-level SHA-256 (deprecated in 3.0, still built by Debian):
// its state is a plain struct to copy, where EVP's digest and MAC
// contexts cost more per call in dispatch and parameters than the hashing.
class Hmac {
 public:
  explicit Hmac(std::span<const std::uint8_t> key) {
    std::array<std::uint8_t, SHA256_CBLOCK> pad{};
    std::ranges::copy(key.first(std::min(key.size(), pad.size())), pad.begin());  // keys here are <= 32 bytes
    for (auto& b : pad) b ^= 0x36;
    SHA256_Init(&inner_);
    SHA256_Update(&inner_, pad.data(), pad.size());
    for (auto& b : pad) b ^= 0x36 ^ 0x5c;
    SHA256_Init(&outer_);
    SHA256_Update(&outer_, pad.data(), pad.size());
    OPENSSL_cleanse(pad.data(), pad.size());
  }
  void mac(std::span<const std::uint8_t> data, std::uint8_t (&out)[SHA256_DIGEST_LENGTH]) const {
    SHA256_CTX c = inner_;
    SHA256_Update(&c, data.data(), data.size());
    SHA256_Final(out, &c);
    c = outer_;
    SHA256_Update(&c, out, sizeof out);
    SHA256_Final(out, &c);
  }

 private:
  SHA256_CTX inner_, outer_;
};

// HKDF-Expand-Label(secret, label, "", length) for length <= 32: one HMAC
// block (RFC 8446 7.1, RFC 5869 2.3).
void expand_label(const Hmac& secret, std::string_view label, std::size_t length, std::uint8_t* out) {
  constexpr std::string_view kPrefix = "tls13 ";
  std::array<std::uint8_t, 2 + 1 + 6 + 16 + 1 + 1> info{};
  std::size_t n = 0;
  info[n++] = 0;
  info[n++] = static_cast<std::uint8_t>(length);
  info[n++] = static_cast<std::uint8_t>(kPrefix.size() + label.size());
  for (const char c : kPrefix) info[n++] = static_cast<std::uint8_t>(c);
  for (const char c : label) info[n++] = static_cast<std::uint8_t>(c);
  info[n++] = 0;  // empty context
  info[n++] = 1;  // T(1)
  std::uint8_t block[SHA256_DIGEST_LENGTH];
  secret.mac(std::span(info).first(n), block);
  std::memcpy(out, block, length);
}

std::span<const std::uint8_t> u8(std::span<const std::byte> s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

bool quic_client_initial_keys(std::uint32_t version, std::span<const std::byte> dcid, QuicInitialKeys& keys) {
  const Version* v = version_of(version);
  if (v == nullptr) return false;
  static const Hmac salt_v1(kV1.salt);
  static const Hmac salt_v2(kV2.salt);
  std::uint8_t initial[SHA256_DIGEST_LENGTH];
  (v == &kV1 ? salt_v1 : salt_v2).mac(u8(dcid), initial);  // HKDF-Extract(salt, DCID)
  std::uint8_t client[SHA256_DIGEST_LENGTH];
  expand_label(Hmac(initial), "client in", sizeof client, client);
  const Hmac secret(client);
  expand_label(secret, v->key_label, keys.key.size(), keys.key.data());
  expand_label(secret, v->iv_label, keys.iv.size(), keys.iv.data());
  expand_label(secret, v->hp_label, keys.hp.size(), keys.hp.data());
  OPENSSL_cleanse(initial, sizeof initial);
  OPENSSL_cleanse(client, sizeof client);
  return true;
}

// A long-header packet's place in its datagram.
struct QuicInitialReader::Packet {
  const Version* version;
  std::span<const std::byte> dcid;
  std::size_t begin;      // first byte
  std::size_t pn_offset;  // the (protected) packet number
  std::size_t end;        // one past the last byte (the Length field's end)
};

const QuicInitialScan& QuicInitialReader::add_datagram(std::span<const std::byte> udp_payload) {
  if (result_.status != QuicStatus::need_more) return result_;
  const bool first = datagrams_++ == 0;
  const bool authentic = udp_payload.size() >= kMinClientDatagramBytes && read_datagram(udp_payload);
  if (result_.status != QuicStatus::need_more) return result_;
  // A later datagram that is not ours (a stray packet, a broken retransmission) is only ignored.
  if (first && !authentic) {
    end(QuicStatus::not_quic);
    return result_;
  }
  finish_if_complete();
  if (result_.status == QuicStatus::need_more && datagrams_ >= kQuicInitialDatagrams) end(QuicStatus::no_sni);
  return result_;
}

// Steps through the coalesced packets (RFC 9000 12.2): long headers carry a
// Length; a short header (1-RTT) runs to the end of the datagram, as does
// anything unreadable (a client may pad a datagram with zeros after its packets).
bool QuicInitialReader::read_datagram(std::span<const std::byte> datagram) {
  bool authentic = false;
  std::size_t at = 0;
  while (at < datagram.size() && result_.status == QuicStatus::need_more) {
    WireReader r(datagram.subspan(at));
    const auto first = r.read_u8();
    const auto number = r.read_u32();
    if (!first || (*first & 0x80) == 0 || !number) break;
    const Version* version = version_of(*number);
    if (version == nullptr || (*first & 0x40) == 0) break;  // another version, or no fixed bit
    const unsigned type = (*first >> 4) & 3;
    if (type == version->retry_type) break;                  // a server's; it has no Length
    const auto dcid_bytes = r.read_u8();
    if (!dcid_bytes || *dcid_bytes > kMaxConnectionIdBytes) break;
    const auto dcid = r.read_bytes(*dcid_bytes);
    const auto scid_bytes = r.read_u8();
    if (!dcid || !scid_bytes || *scid_bytes > kMaxConnectionIdBytes || !r.read_bytes(*scid_bytes)) break;
    if (type == version->initial_type) {
      const auto token_bytes = r.read_varint();
      if (!token_bytes || !r.read_bytes(*token_bytes)) break;
    }
    const auto length = r.read_varint();
    if (!length || *length > r.remaining()) break;
    const Packet packet{version, *dcid, at, at + r.position(), at + r.position() + static_cast<std::size_t>(*length)};
    if (type == version->initial_type && read_initial(datagram, packet)) authentic = true;
    at = packet.end;  // 0-RTT and Handshake packets: stepped over unread
  }
  return authentic;
}

// Removes header protection and decrypts one Initial (RFC 9001 5.3, 5.4),
// then reads its frames. False (and nothing kept) if it is not authentic.
bool QuicInitialReader::read_initial(std::span<const std::byte> datagram, const Packet& packet) {
  const std::size_t header_bytes = packet.pn_offset - packet.begin;
  const std::size_t packet_bytes = packet.end - packet.begin;
  if (packet_bytes < header_bytes + kSampleOffsetBytes + kSampleBytes) return false;
  const auto dcid = packet.dcid;
  if (keys_version_ != packet.version->number || !std::ranges::equal(keys_dcid_, dcid)) {
    keys_dcid_.assign(dcid.begin(), dcid.end());
    keys_version_ = 0;
    if (!quic_client_initial_keys(packet.version->number, dcid, keys_)) return false;
    keys_version_ = packet.version->number;
  }
  const auto bytes = u8(datagram.subspan(packet.begin, packet_bytes));
  packet_.assign(bytes.begin(), bytes.end());
  std::uint8_t mask[16];
  if (!crypto().mask(keys_.hp, packet_.data() + header_bytes + kSampleOffsetBytes, mask)) return false;
  packet_[0] ^= mask[0] & 0x0f;
  const std::size_t pn_bytes = (packet_[0] & 0x03) + 1;
  if (packet_bytes < header_bytes + pn_bytes + kTagBytes) return false;
  // The full packet number: a client's first Initials count from 0, so the
  // truncated one is the whole (RFC 9000 A.3 with no packet acknowledged yet).
  std::uint8_t nonce[12];
  std::memcpy(nonce, keys_.iv.data(), sizeof nonce);
  for (std::size_t i = 0; i < pn_bytes; ++i) {
    packet_[header_bytes + i] ^= mask[1 + i];
    nonce[sizeof nonce - pn_bytes + i] ^= packet_[header_bytes + i];
  }
  const std::size_t aad_bytes = header_bytes + pn_bytes;
  const auto text = std::span(packet_).subspan(aad_bytes, packet_bytes - aad_bytes - kTagBytes);
  if (!crypto().open(keys_, nonce, std::span(packet_).first(aad_bytes), text)) return false;
  if ((packet_[0] & 0x0c) != 0 || text.empty()) {  // reserved bits set, or no frame (RFC 9000 17.2, 12.4)
    end(QuicStatus::not_quic);
    return true;
  }
  if (result_.version == 0) result_.version = packet.version->number;
  if (!read_frames(std::as_bytes(text))) end(QuicStatus::not_quic);
  return true;
}

// The frames an Initial may carry (RFC 9000 12.4, table 3): PADDING, PING,
// ACK, CRYPTO, CONNECTION_CLOSE; anything else is a protocol violation.
bool QuicInitialReader::read_frames(std::span<const std::byte> payload) {
  std::size_t at = 0;
  while (at < payload.size() && result_.status == QuicStatus::need_more) {
    // PADDING, one byte a frame, fills most of an Initial: skipped as a run.
    if (payload[at] == std::byte{0}) {
      at = static_cast<std::size_t>(std::find_if(payload.begin() + static_cast<std::ptrdiff_t>(at), payload.end(),
                                                 [](std::byte b) { return b != std::byte{0}; }) -
                                    payload.begin());
      continue;
    }
    WireReader r(payload.subspan(at));
    const auto type = r.read_varint();
    if (!type) return false;
    switch (*type) {
      case 0x01:  // PING
        break;
      case 0x02:    // ACK
      case 0x03: {  // ACK with ECN counts
        const auto largest = r.read_varint();
        const auto delay = r.read_varint();
        const auto ranges = r.read_varint();
        const auto first_range = r.read_varint();
        if (!largest || !delay || !ranges || !first_range || *ranges > r.remaining()) return false;
        for (std::uint64_t i = 0; i < 2 * *ranges + (*type == 0x03 ? 3 : 0); ++i) {
          if (!r.read_varint()) return false;  // gap and length of each range, then ECN counts
        }
        break;
      }
      case 0x06: {  // CRYPTO
        const auto offset = r.read_varint();
        const auto length = r.read_varint();
        if (!offset || !length) return false;
        const auto data = r.read_bytes(*length);
        if (!data) return false;
        if (!add_crypto(*offset, *data)) return true;  // over a cap: the scan has ended
        break;
      }
      case 0x1c: {  // CONNECTION_CLOSE: the client gave up; nothing to classify
        end(QuicStatus::no_sni);
        return true;
      }
      default:
        return false;
    }
    at += r.position();
  }
  return true;
}

// Stores a CRYPTO frame's bytes at their offset and merges its range. Bytes
// sent twice must be the same (RFC 9000 19.6); the first copy stays.
bool QuicInitialReader::add_crypto(std::uint64_t offset, std::span<const std::byte> data) {
  if (data.empty()) return true;
  if (offset > kQuicCryptoBufferBytes || data.size() > kQuicCryptoBufferBytes - offset) {
    end(QuicStatus::no_sni);
    return false;
  }
  const std::size_t begin = static_cast<std::size_t>(offset);
  const std::size_t stop = begin + data.size();
  if (crypto_.capacity() == 0) crypto_.reserve(4096);  // a ClientHello, in one allocation
  if (crypto_.size() < stop) crypto_.resize(stop);
  std::memcpy(crypto_.data() + begin, data.data(), data.size());
  // Insert [begin, stop), then merge every range it touches.
  auto it = std::ranges::lower_bound(ranges_, std::pair{begin, std::size_t{0}});
  it = ranges_.insert(it, {begin, stop});
  if (it != ranges_.begin() && std::prev(it)->second >= it->first) --it;
  auto next = std::next(it);
  while (next != ranges_.end() && next->first <= it->second) {
    it->second = std::max(it->second, next->second);
    next = ranges_.erase(next);
  }
  if (ranges_.size() > kMaxCryptoRanges) {
    end(QuicStatus::no_sni);
    return false;
  }
  return true;
}

// Once the CRYPTO stream holds the whole ClientHello from offset 0, reads it.
void QuicInitialReader::finish_if_complete() {
  if (ranges_.empty() || ranges_.front().first != 0) return;
  const std::size_t contiguous = ranges_.front().second;
  if (contiguous < 4) return;
  const auto at = [this](std::size_t i) { return std::to_integer<std::size_t>(crypto_[i]); };
  if (at(0) != 1) {  // not a ClientHello
    end(QuicStatus::not_quic);
    return;
  }
  const std::size_t message_bytes = 4 + (at(1) << 16 | at(2) << 8 | at(3));
  if (message_bytes > kQuicCryptoBufferBytes) {
    end(QuicStatus::no_sni);
    return;
  }
  if (contiguous < message_bytes) return;
  ClientHelloFields hello =
      read_client_hello_fields(std::span(crypto_).first(message_bytes), HelloFraming::handshake_message);
  switch (hello.status) {
    case SniStatus::found: end(QuicStatus::found); break;
    case SniStatus::no_sni: end(QuicStatus::no_sni); break;
    default: end(QuicStatus::not_quic); break;  // malformed (a whole message cannot need more)
  }
  result_.host = std::move(hello.host);
  result_.alpn = std::move(hello.alpn);
}

QuicInitialScan scan_quic_initials(std::span<const std::span<const std::byte>> datagrams) {
  QuicInitialReader reader;
  for (const auto& d : datagrams) {
    if (reader.add_datagram(d).status != QuicStatus::need_more) break;
  }
  return reader.result();
}

}  // namespace egw::proxy
