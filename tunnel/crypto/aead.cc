#include "tunnel/crypto/aead.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace egw::tunnel::crypto {
namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "egw crypto: %s failed (AEAD, OpenSSL)\n", what);
  std::abort();
}

const EVP_CIPHER* evp_cipher(Aead aead) {
  return aead == Aead::aes_256_gcm ? EVP_aes_256_gcm() : EVP_chacha20_poly1305();
}

const unsigned char* bytes(std::span<const std::byte> s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* bytes(std::span<std::byte> s) { return reinterpret_cast<unsigned char*>(s.data()); }

// One EVP_CipherUpdate call takes an int length; datagrams are far smaller.
int length(std::size_t size) {
  if (size > 0x7fffffff) fail("length over 2^31");
  return static_cast<int>(size);
}

}  // namespace

std::string_view aead_name(Aead aead) {
  return aead == Aead::aes_256_gcm ? "aes-256-gcm" : "chacha20-poly1305";
}

std::uint64_t aead_confidentiality_limit(Aead aead) {
  return aead == Aead::aes_256_gcm ? std::uint64_t{1} << 23 : std::uint64_t{1} << 62;
}

std::uint64_t aead_integrity_limit(Aead aead) {
  return aead == Aead::aes_256_gcm ? std::uint64_t{1} << 52 : std::uint64_t{1} << 36;
}

void AeadKey::nonce(Aead aead, std::uint64_t counter, std::uint8_t (&nonce)[kNonceBytes]) {
  for (int i = 0; i < 4; ++i) nonce[i] = 0;
  if (aead == Aead::aes_256_gcm) {
    for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<std::uint8_t>(counter >> (56 - 8 * i));
  } else {
    for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<std::uint8_t>(counter >> (8 * i));
  }
}

AeadKey::AeadKey(Aead aead, const Key32& key) : aead_(aead), ctx_(EVP_CIPHER_CTX_new()) {
  if (ctx_ == nullptr) fail("EVP_CIPHER_CTX_new");
  // Cipher and key now; the IV (and the direction) per call. Both ciphers'
  // default IV length is the 12 bytes we use.
  if (EVP_CipherInit_ex(ctx_, evp_cipher(aead), nullptr, key.data(), nullptr, 1) != 1) {
    fail("EVP_CipherInit_ex(key)");
  }
}

AeadKey::~AeadKey() {
  // EVP_CIPHER_CTX_free cleanses the provider's context (key and state).
  EVP_CIPHER_CTX_free(ctx_);
}

void AeadKey::seal(std::uint64_t counter, std::span<const std::byte> ad,
                         std::span<std::byte> packet) {
  std::uint8_t n[kNonceBytes];
  nonce(aead_, counter, n);
  seal_with_nonce(n, ad, packet);
}

bool AeadKey::open(std::uint64_t counter, std::span<const std::byte> ad,
                         std::span<std::byte> packet) {
  std::uint8_t n[kNonceBytes];
  nonce(aead_, counter, n);
  return open_with_nonce(n, ad, packet);
}

void AeadKey::seal_gather(std::uint64_t counter, std::span<const std::byte> ad,
                          std::span<std::byte> packet, std::span<const Source> sources) {
  std::uint8_t n[kNonceBytes];
  nonce(aead_, counter, n);
  seal_nonce_gather(n, ad, packet, sources);
}

void AeadKey::seal_with_nonce(const std::uint8_t (&nonce)[kNonceBytes],
                              std::span<const std::byte> ad, std::span<std::byte> packet) {
  seal_nonce_gather(nonce, ad, packet, {});
}

// Both ciphers are stream ciphers under EVP: updates of any length, in
// order, give the ciphertext one update of the joined plaintext gives.
void AeadKey::seal_nonce_gather(const std::uint8_t (&nonce)[kNonceBytes],
                                std::span<const std::byte> ad, std::span<std::byte> packet,
                                std::span<const Source> sources) {
  if (packet.size() < kTagBytes) fail("seal: packet shorter than the tag");
  const std::span<std::byte> text = packet.first(packet.size() - kTagBytes);
  int out = 0;
  if (EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nonce, 1) != 1) fail("seal: init IV");
  if (!ad.empty() && EVP_CipherUpdate(ctx_, nullptr, &out, bytes(ad), length(ad.size())) != 1) {
    fail("seal: AD");
  }
  auto update = [&](std::byte* to, const std::byte* from, std::size_t size) {
    if (size == 0) return;
    if (EVP_CipherUpdate(ctx_, reinterpret_cast<unsigned char*>(to), &out,
                         reinterpret_cast<const unsigned char*>(from), length(size)) != 1) {
      fail("seal: update");
    }
  };
  std::size_t done = 0;  // plaintext bytes encrypted so far
  for (const Source& source : sources) {
    if (source.offset < done || source.offset > text.size() ||
        source.bytes.size() > text.size() - source.offset) {
      fail("seal: source out of order or outside the packet");
    }
    update(text.data() + done, text.data() + done, source.offset - done);  // in place
    update(text.data() + source.offset, source.bytes.data(), source.bytes.size());
    done = source.offset + source.bytes.size();
  }
  update(text.data() + done, text.data() + done, text.size() - done);
  if (EVP_CipherFinal_ex(ctx_, bytes(text) + text.size(), &out) != 1) fail("seal: final");
  if (EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, kTagBytes, bytes(packet.last(kTagBytes))) !=
      1) {
    fail("seal: get tag");
  }
}

bool AeadKey::open_with_nonce(const std::uint8_t (&nonce)[kNonceBytes],
                                    std::span<const std::byte> ad, std::span<std::byte> packet) {
  if (packet.size() < kTagBytes) return false;
  const std::span<std::byte> text = packet.first(packet.size() - kTagBytes);
  int out = 0;
  if (EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nonce, 0) != 1) fail("open: init IV");
  if (!ad.empty() && EVP_CipherUpdate(ctx_, nullptr, &out, bytes(ad), length(ad.size())) != 1) {
    fail("open: AD");
  }
  if (!text.empty() &&
      EVP_CipherUpdate(ctx_, bytes(text), &out, bytes(text), length(text.size())) != 1) {
    fail("open: update");
  }
  if (EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, kTagBytes, bytes(packet.last(kTagBytes))) !=
      1) {
    fail("open: set tag");
  }
  if (EVP_CipherFinal_ex(ctx_, bytes(text) + text.size(), &out) != 1) {
    ERR_clear_error();  // a forged packet must not grow the thread's error queue
    return false;
  }
  return true;
}

}  // namespace egw::tunnel::crypto
