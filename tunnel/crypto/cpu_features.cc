#include "tunnel/crypto/cpu_features.h"

#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace egw::tunnel::crypto {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// OpenSSL's capability vector bits (crypto/cpuid.c): word 1 is CPUID.1:ECX.
constexpr std::uint64_t kIa32capAes = std::uint64_t{1} << (32 + 25);
constexpr std::uint64_t kIa32capPclmul = std::uint64_t{1} << (32 + 1);

// OPENSSL_ia32cap="~0x200000200000000" and the like switch OpenSSL's use of
// the instructions off; honour its first word as OpenSSL reads it ("~value"
// clears those bits; a plain value is the vector OpenSSL then uses, so a
// bit it leaves out is off).
std::uint64_t apply_openssl_mask(std::uint64_t caps) {
  const char* env = std::getenv("OPENSSL_ia32cap");
  if (env == nullptr || *env == '\0') return caps;
  const bool clear = *env == '~';
  const std::uint64_t v = std::strtoull(env + (clear ? 1 : 0), nullptr, 0);
  return clear ? caps & ~v : caps & v;
}

bool detect() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  std::uint64_t caps = 0;
  if (ecx & bit_AES) caps |= kIa32capAes;
  if (ecx & bit_PCLMUL) caps |= kIa32capPclmul;
  caps = apply_openssl_mask(caps);
  return (caps & kIa32capAes) && (caps & kIa32capPclmul);
}
#elif defined(__aarch64__) && defined(__linux__)
bool detect() {
  const unsigned long hw = getauxval(AT_HWCAP);
  return (hw & HWCAP_AES) && (hw & HWCAP_PMULL);
}
#else
bool detect() { return false; }
#endif

}  // namespace

bool cpu_has_aes_gcm_instructions() {
  static const bool has = detect();
  return has;
}

}  // namespace egw::tunnel::crypto
