#include "tunnel/crypto/aead.h"

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace egw::tunnel::crypto {

// The cipher's functions in the provider that EVP would call. Why not EVP:
// OpenSSL 3.0's EVP_CipherInit_ex forgets the context's IV length on every
// init and asks the provider for it again (a parameter lookup by name), and
// EVP_CIPHER_CTX_ctrl turns each tag call into a parameter array: ~60 ns
// of a 1,400-byte AES-256-GCM seal's ~430, ~50 of ChaCha20-Poly1305's ~910
// (bench/crypto.cc). The provider's own functions take the same arguments
// EVP passes them, so the bytes are the same (the known answers in
// tests/crypto/); the tag still goes by its parameter name, the
// provider's only way. Found once per process through the public provider
// API (OSSL_PROVIDER_query_operation) on the provider EVP's fetch chose.
struct ProviderCipher {
  EVP_CIPHER* fetched = nullptr;  // held for the process: keeps the provider loaded
  void* provider_ctx = nullptr;
  OSSL_FUNC_cipher_newctx_fn* newctx = nullptr;
  OSSL_FUNC_cipher_freectx_fn* freectx = nullptr;
  OSSL_FUNC_cipher_encrypt_init_fn* encrypt_init = nullptr;
  OSSL_FUNC_cipher_decrypt_init_fn* decrypt_init = nullptr;
  OSSL_FUNC_cipher_update_fn* update = nullptr;
  OSSL_FUNC_cipher_final_fn* final = nullptr;
  OSSL_FUNC_cipher_get_ctx_params_fn* get_ctx_params = nullptr;
  OSSL_FUNC_cipher_set_ctx_params_fn* set_ctx_params = nullptr;
};

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "egw crypto: %s failed (AEAD, OpenSSL)\n", what);
  std::abort();
}

// "AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46" names `name`?
bool names_include(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const std::size_t colon = names.find(':');
    const std::string_view one = names.substr(0, colon);
    if (one.size() == name.size() && OPENSSL_strncasecmp(one.data(), name.data(), name.size()) == 0) {
      return true;
    }
    if (colon == std::string_view::npos) break;
    names.remove_prefix(colon + 1);
  }
  return false;
}

void take(ProviderCipher& c, const OSSL_DISPATCH* f) {
  for (; f->function_id != 0; ++f) {
    switch (f->function_id) {
      case OSSL_FUNC_CIPHER_NEWCTX: c.newctx = OSSL_FUNC_cipher_newctx(f); break;
      case OSSL_FUNC_CIPHER_FREECTX: c.freectx = OSSL_FUNC_cipher_freectx(f); break;
      case OSSL_FUNC_CIPHER_ENCRYPT_INIT: c.encrypt_init = OSSL_FUNC_cipher_encrypt_init(f); break;
      case OSSL_FUNC_CIPHER_DECRYPT_INIT: c.decrypt_init = OSSL_FUNC_cipher_decrypt_init(f); break;
      case OSSL_FUNC_CIPHER_UPDATE: c.update = OSSL_FUNC_cipher_update(f); break;
      case OSSL_FUNC_CIPHER_FINAL: c.final = OSSL_FUNC_cipher_final(f); break;
      case OSSL_FUNC_CIPHER_GET_CTX_PARAMS: c.get_ctx_params = OSSL_FUNC_cipher_get_ctx_params(f); break;
      case OSSL_FUNC_CIPHER_SET_CTX_PARAMS: c.set_ctx_params = OSSL_FUNC_cipher_set_ctx_params(f); break;
      default: break;
    }
  }
}

ProviderCipher find_provider_cipher(const char* name) {
  ProviderCipher c;
  c.fetched = EVP_CIPHER_fetch(nullptr, name, nullptr);
  if (c.fetched == nullptr) fail(name);
  OSSL_PROVIDER* provider = const_cast<OSSL_PROVIDER*>(EVP_CIPHER_get0_provider(c.fetched));
  if (provider == nullptr) fail("EVP_CIPHER_get0_provider");
  c.provider_ctx = OSSL_PROVIDER_get0_provider_ctx(provider);
  int no_cache = 0;
  const OSSL_ALGORITHM* algorithms = OSSL_PROVIDER_query_operation(provider, OSSL_OP_CIPHER, &no_cache);
  for (const OSSL_ALGORITHM* a = algorithms; a != nullptr && a->algorithm_names != nullptr; ++a) {
    if (names_include(a->algorithm_names, name)) {
      take(c, a->implementation);
      break;
    }
  }
  if (algorithms != nullptr) OSSL_PROVIDER_unquery_operation(provider, OSSL_OP_CIPHER, algorithms);
  if (c.newctx == nullptr || c.freectx == nullptr || c.encrypt_init == nullptr ||
      c.decrypt_init == nullptr || c.update == nullptr || c.final == nullptr ||
      c.get_ctx_params == nullptr || c.set_ctx_params == nullptr) {
    fail("the provider's cipher functions");
  }
  return c;
}

const ProviderCipher& provider_cipher(Aead aead) {
  // Function-local statics: found once, thread-safe, never freed.
  if (aead == Aead::aes_256_gcm) {
    static const ProviderCipher gcm = find_provider_cipher("AES-256-GCM");
    return gcm;
  }
  static const ProviderCipher chacha = find_provider_cipher("ChaCha20-Poly1305");
  return chacha;
}

const unsigned char* bytes(std::span<const std::byte> s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* bytes(std::span<std::byte> s) { return reinterpret_cast<unsigned char*>(s.data()); }

// The packet's last 16 bytes as the provider's tag parameter (get or set).
std::array<OSSL_PARAM, 2> tag_param(std::span<std::byte> packet) {
  return {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, bytes(packet.last(AeadKey::kTagBytes)),
                                            AeadKey::kTagBytes),
          OSSL_PARAM_construct_end()};
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

AeadKey::AeadKey(Aead aead, const Key32& key)
    : aead_(aead), cipher_(&provider_cipher(aead)), ctx_(cipher_->newctx(cipher_->provider_ctx)) {
  if (ctx_ == nullptr) fail("the cipher's newctx");
  // The key now; the IV (and the direction) per call. Both ciphers'
  // default IV length is the 12 bytes we use.
  if (cipher_->encrypt_init(ctx_, key.data(), key.size(), nullptr, 0, nullptr) != 1) {
    fail("encrypt_init(key)");
  }
}

AeadKey::~AeadKey() {
  // Both providers' freectx cleanse the context (key and state).
  cipher_->freectx(ctx_);
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

void AeadKey::update(unsigned char* to, const unsigned char* from, std::size_t size) {
  std::size_t out = 0;
  if (size != 0 && cipher_->update(ctx_, to, &out, size, from, size) != 1) fail("update");
}

// Both ciphers are stream ciphers: updates of any length, in order, give the
// ciphertext one update of the joined plaintext gives.
void AeadKey::seal_nonce_gather(const std::uint8_t (&nonce)[kNonceBytes],
                                std::span<const std::byte> ad, std::span<std::byte> packet,
                                std::span<const Source> sources) {
  if (packet.size() < kTagBytes) fail("seal: packet shorter than the tag");
  const std::span<std::byte> text = packet.first(packet.size() - kTagBytes);
  if (cipher_->encrypt_init(ctx_, nullptr, 0, nonce, kNonceBytes, nullptr) != 1) fail("seal: init IV");
  update(nullptr, bytes(ad), ad.size());
  auto encrypt = [&](std::size_t at, const std::byte* from, std::size_t size) {
    update(bytes(text) + at, reinterpret_cast<const unsigned char*>(from), size);
  };
  std::size_t done = 0;  // plaintext bytes encrypted so far
  for (const Source& source : sources) {
    if (source.offset < done || source.offset > text.size() ||
        source.bytes.size() > text.size() - source.offset) {
      fail("seal: source out of order or outside the packet");
    }
    encrypt(done, text.data() + done, source.offset - done);  // in place
    encrypt(source.offset, source.bytes.data(), source.bytes.size());
    done = source.offset + source.bytes.size();
  }
  encrypt(done, text.data() + done, text.size() - done);
  std::size_t out = 0;
  if (cipher_->final(ctx_, bytes(text) + text.size(), &out, 0) != 1) fail("seal: final");
  auto tag = tag_param(packet);
  if (cipher_->get_ctx_params(ctx_, tag.data()) != 1) fail("seal: get tag");
}

bool AeadKey::open_with_nonce(const std::uint8_t (&nonce)[kNonceBytes],
                              std::span<const std::byte> ad, std::span<std::byte> packet) {
  if (packet.size() < kTagBytes) return false;
  const std::span<std::byte> text = packet.first(packet.size() - kTagBytes);
  if (cipher_->decrypt_init(ctx_, nullptr, 0, nonce, kNonceBytes, nullptr) != 1) fail("open: init IV");
  update(nullptr, bytes(ad), ad.size());
  update(bytes(text), bytes(text), text.size());
  const auto tag = tag_param(packet);
  if (cipher_->set_ctx_params(ctx_, tag.data()) != 1) fail("open: set tag");
  std::size_t out = 0;
  if (cipher_->final(ctx_, bytes(text) + text.size(), &out, 0) != 1) {
    ERR_clear_error();  // a forged packet must not grow the thread's error queue
    return false;
  }
  return true;
}

}  // namespace egw::tunnel::crypto
