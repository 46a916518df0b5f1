#include "tunnel/crypto/hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace egw::tunnel::crypto {
namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "egw crypto: %s failed (OpenSSL)\n", what);
  std::abort();
}

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// The HKDF chain: outputs[i] = HMAC(temp_key, outputs[i-1] || i+1).
template <std::size_t N>
std::array<SecretKey32, N> hkdf(const Key32& chaining_key, Bytes input_key_material) {
  const SecretKey32 temp_key(hmac_sha256(chaining_key, input_key_material));
  std::array<SecretKey32, N> outputs;
  std::array<std::uint8_t, 33> block{};
  std::size_t block_size = 0;
  for (std::size_t i = 0; i < N; ++i) {
    block[block_size] = static_cast<std::uint8_t>(i + 1);
    outputs[i].bytes = hmac_sha256(temp_key.bytes, Bytes(block.data(), block_size + 1));
    std::copy(outputs[i].bytes.begin(), outputs[i].bytes.end(), block.begin());
    block_size = 32;
  }
  OPENSSL_cleanse(block.data(), block.size());
  return outputs;
}

}  // namespace

Key32 sha256_parts(std::span<const Bytes> parts) {
  const std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) fail("EVP_DigestInit_ex");
  for (const Bytes part : parts) {
    if (!part.empty() && EVP_DigestUpdate(ctx.get(), part.data(), part.size()) != 1) {
      fail("EVP_DigestUpdate");
    }
  }
  Key32 out;
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx.get(), out.data(), &size) != 1 || size != out.size()) {
    fail("EVP_DigestFinal_ex");
  }
  return out;
}

Key32 hmac_sha256(Bytes key, Bytes data) {
  Key32 out;
  unsigned int size = 0;
  // HMAC() with a null data pointer and zero length is fine, but keep the
  // pointer valid for older builds.
  static constexpr std::uint8_t kEmpty = 0;
  const std::uint8_t* data_ptr = data.empty() ? &kEmpty : data.data();
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data_ptr, data.size(),
           out.data(), &size) == nullptr ||
      size != out.size()) {
    fail("HMAC(SHA-256)");
  }
  return out;
}

std::array<SecretKey32, 2> hkdf2(const Key32& chaining_key, Bytes input_key_material) {
  return hkdf<2>(chaining_key, input_key_material);
}

std::array<SecretKey32, 3> hkdf3(const Key32& chaining_key, Bytes input_key_material) {
  return hkdf<3>(chaining_key, input_key_material);
}

}  // namespace egw::tunnel::crypto
