#include "tunnel/crypto/keys.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace egw::tunnel::crypto {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "egw crypto: %s failed (OpenSSL)\n", what);
  std::abort();
}

Pkey private_pkey(const Key32& private_key) {
  Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, private_key.data(),
                                        private_key.size()));
  if (!key) fail("EVP_PKEY_new_raw_private_key(X25519)");
  return key;
}

}  // namespace

SecretKey32& SecretKey32::operator=(const SecretKey32& other) {
  if (this != &other) {
    wipe();
    bytes = other.bytes;
  }
  return *this;
}

SecretKey32& SecretKey32::operator=(const Key32& key) {
  wipe();
  bytes = key;
  return *this;
}

SecretKey32::~SecretKey32() { wipe(); }

bool SharedSecretKey::operator==(const SharedSecretKey& other) const {
  return CRYPTO_memcmp(get().data(), other.get().data(), get().size()) == 0;
}

void SecretKey32::wipe() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

void secure_wipe(void* data, std::size_t size) { OPENSSL_cleanse(data, size); }

Key32 x25519_generate_private() {
  Key32 key;
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) fail("RAND_bytes");
  key[0] &= 248;
  key[31] &= 127;
  key[31] |= 64;
  return key;
}

Key32 x25519_public_key(const Key32& private_key) {
  const Pkey key = private_pkey(private_key);
  Key32 out;
  std::size_t size = out.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), out.data(), &size) != 1 || size != out.size()) {
    fail("EVP_PKEY_get_raw_public_key(X25519)");
  }
  return out;
}

std::optional<Key32> x25519(const Key32& private_key, const Key32& peer_public) {
  const Pkey own = private_pkey(private_key);
  // Any 32 bytes are a valid X25519 public key encoding (RFC 7748 §5): a
  // failure here is an allocation failure, not bad input.
  const Pkey peer(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer_public.data(),
                                              peer_public.size()));
  if (!peer) fail("EVP_PKEY_new_raw_public_key(X25519)");
  const PkeyCtx ctx(EVP_PKEY_CTX_new(own.get(), nullptr));
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1) fail("EVP_PKEY_derive_init(X25519)");
  if (EVP_PKEY_derive_set_peer(ctx.get(), peer.get()) != 1) fail("EVP_PKEY_derive_set_peer");
  Key32 shared;
  std::size_t size = shared.size();
  // OpenSSL refuses (returns <= 0) when the shared secret is all zero: the
  // peer's point has low order. Check the bytes as well, whatever the version.
  const bool ok = EVP_PKEY_derive(ctx.get(), shared.data(), &size) == 1 && size == shared.size();
  static constexpr Key32 kZero{};
  if (!ok) ERR_clear_error();  // the thread's error queue must not grow per bad packet
  if (!ok || CRYPTO_memcmp(shared.data(), kZero.data(), shared.size()) == 0) {
    OPENSSL_cleanse(shared.data(), shared.size());
    return std::nullopt;
  }
  return shared;
}

}  // namespace egw::tunnel::crypto
