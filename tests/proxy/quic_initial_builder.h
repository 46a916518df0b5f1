// Building client Initial packets for tests, as a QUIC client protects them
// (RFC 9001 5.3, 5.4): a long header with a 4-byte packet number, the frames
// padded to a chosen datagram size, AES-128-GCM, then header protection.
// Checked against RFC 9001 A.2 byte for byte (QuicInitial.BuilderMatchesRfc).
#pragma once

#include <openssl/evp.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "proxy/quic_initial.h"
#include "tests/proxy/client_hello_builder.h"

namespace egw::proxy::test_data {

inline Bytes from_hex(std::string_view hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A CRYPTO frame (RFC 9000 19.6) with 4-byte varints.
inline Bytes crypto_frame(std::size_t offset, std::span<const std::byte> data) {
  Bytes f;
  put(f, 0x06, 1);
  put(f, 0x80000000 | offset, 4);
  put(f, 0x80000000 | data.size(), 4);
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

// One protected Initial of exactly `packet_bytes` bytes (frames padded with
// PADDING), from a client with an empty SCID and no token.
inline Bytes seal_initial(std::uint32_t version, const Bytes& dcid, std::uint32_t packet_number, const Bytes& frames,
                          std::size_t packet_bytes = 1200) {
  const unsigned type = version == kQuicVersion2 ? 1 : 0;
  Bytes p;
  put(p, 0xc0 | type << 4 | 0x03, 1);  // long header, fixed bit, Initial, 4-byte packet number
  put(p, version, 4);
  put(p, dcid.size(), 1);
  put(p, dcid);
  put(p, 0, 1);  // SCID
  put(p, 0, 1);  // token
  const std::size_t header_bytes = p.size() + 2 + 4;
  if (packet_bytes < header_bytes + frames.size() + 16 || packet_bytes - header_bytes > 16383) std::abort();
  put(p, 0x4000 | (packet_bytes - header_bytes + 4), 2);
  put(p, packet_number, 4);
  Bytes text = frames;
  text.resize(packet_bytes - header_bytes - 16);

  QuicInitialKeys k;
  if (!quic_client_initial_keys(version, dcid, k)) std::abort();
  std::uint8_t nonce[12];
  std::memcpy(nonce, k.iv.data(), 12);
  for (int i = 0; i < 4; ++i) nonce[8 + i] ^= static_cast<std::uint8_t>(packet_number >> (8 * (3 - i)));
  const auto u = [](auto& b) { return reinterpret_cast<unsigned char*>(b.data()); };
  Bytes sealed(text.size() + 16);
  EVP_CIPHER_CTX* gcm = EVP_CIPHER_CTX_new();
  int n = 0;
  if (EVP_EncryptInit_ex(gcm, EVP_aes_128_gcm(), nullptr, k.key.data(), nonce) != 1 ||
      EVP_EncryptUpdate(gcm, nullptr, &n, u(p), static_cast<int>(p.size())) != 1 ||
      EVP_EncryptUpdate(gcm, u(sealed), &n, u(text), static_cast<int>(text.size())) != 1 ||
      EVP_EncryptFinal_ex(gcm, u(sealed) + text.size(), &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(gcm, EVP_CTRL_GCM_GET_TAG, 16, u(sealed) + text.size()) != 1) {
    std::abort();
  }
  EVP_CIPHER_CTX_free(gcm);
  put(p, sealed);

  std::uint8_t mask[16];
  EVP_CIPHER_CTX* ecb = EVP_CIPHER_CTX_new();
  if (EVP_EncryptInit_ex(ecb, EVP_aes_128_ecb(), nullptr, k.hp.data(), nullptr) != 1 ||
      EVP_EncryptUpdate(ecb, mask, &n, u(p) + header_bytes, 16) != 1) {
    std::abort();
  }
  EVP_CIPHER_CTX_free(ecb);
  p[0] ^= static_cast<std::byte>(mask[0] & 0x0f);
  for (std::size_t i = 0; i < 4; ++i) p[header_bytes - 4 + i] ^= static_cast<std::byte>(mask[1 + i]);
  return p;
}

// ALPN (RFC 7301) with the given names.
inline Bytes alpn_extension(const std::vector<std::string>& names) {
  Bytes list;
  for (const auto& n : names) {
    put(list, n.size(), 1);
    put(list, n);
  }
  Bytes body;
  put(body, list.size(), 2);
  put(body, list);
  return extension(16, body);
}

// A ClientHello (handshake message) of about `bytes` bytes: host, ALPN, and
// an extension standing in for a post-quantum key share.
inline Bytes large_client_hello(const std::string& host, std::size_t bytes) {
  return client_hello({extension(0x11ec, Bytes(bytes, std::byte{0x42})), sni_extension(host), alpn_extension({"h3"})});
}

}  // namespace egw::proxy::test_data
